'use strict'
// prodsim-kafkajs: the driver protocol (clients/README.md) on kafkajs 2.2.4,
// or on the module named by $PRODSIM_KAFKAJS_MODULE (an npm name such as
// kafkajs-fixes, or a module directory: wire/drivers.cc sets it for
// --client=kafkajs, kafkajs-fixes and NAME@VERSION).
//
// One job line on stdin; protocol events on stdout, one JSON object per
// line, each written whole by a single write (stdout is a pipe, and Node
// writes pipes synchronously on Linux); kafkajs's own log goes to stderr.
//
// Each producer.send() call (a "call") carries `messages_per_send`
// consecutive ids of one topic (default 1). By default each call is made
// once the one before it has settled: the way an application that needs its
// messages in order uses kafkajs. With `concurrent_sends` N > 1 up to N
// calls are in flight at once, which kafkajs does not keep in order (each
// takes a different number of asynchronous steps to its broker's lock), so
// the start line then says "order":"per_call" and prodsim holds only each
// call's own messages to their order. README.md here has the options and
// the mapping of prodsim's scenario fields onto kafkajs; each choice below
// that is not in the protocol says why.
//
// Invariants: every id handed to send() prints `produce` first and then
// exactly one `ack` or `error` (kafkajs settles each call's promise once, and
// the driver reports every message of the call from it); nothing is printed
// after `closed`; every wait has a bound.

const path = require('path')

// Simulated time (clients/README.md, "Simulated time"; lockstep.js): the
// fakes go in before anything reads a clock or loads kafkajs.
const kClock = process.env.PRODSIM_CLOCK
const lockstep = kClock === 'simulated' ? require('./lockstep') : null
const kLockstepJob = lockstep ? lockstep.Install().job : null

const kStartNs = process.hrtime.bigint()

// Bounds (STYLE.md: a limit on everything). The job's own ranges are the
// protocol's; these are the driver's.
const kJobBytesMax = 64 << 20 // the job line (1000 topics of 249 bytes fit easily)
const kConnectPauseMs = 250 // between producer.connect() calls, each with kafkajs's own retries
const kConnectWaitMsMax = 30000 // connect() tried for at most this long (or until close_at)
const kDisconnectWaitMs = 5000 // producer.disconnect() may hang on a dead broker
const kPurgeWaitMs = 5000 // after a flush timeout, for the reports disconnect() provokes

function NowUs() {
  return Number((process.hrtime.bigint() - kStartNs) / 1000n)
}

// ---------------------------------------------------------------------------
// Output

let closed_printed = false
process.stdout.on('error', () => {}) // EPIPE: prodsim has gone; it kills us anyway

// `fields` is a list of [name, value] so that "event" comes first and the
// order is the protocol's; values are JSON-encoded except `raw` ones
// (already-checked decimal integers, e.g. a 64-bit offset).
function Emit(event, fields) {
  if (closed_printed) return
  let line = `{"event":${JSON.stringify(event)}`
  for (const [name, value, raw] of fields) {
    line += `,${JSON.stringify(name)}:${raw ? value : JSON.stringify(value)}`
  }
  if (event !== 'job_error') line += `,"t_us":${NowUs()}`
  process.stdout.write(line + '}\n')
  if (event === 'closed') closed_printed = true
}

function JobError(text, exit_code) {
  Emit('job_error', [['text', text]])
  process.exit(exit_code)
}

// ---------------------------------------------------------------------------
// The job: strict JSON (clients/README.md), so a small parser of its own:
// JSON.parse accepts fractions, exponents and duplicate keys, which the
// protocol refuses.

class JsonReader {
  constructor(text) {
    this.s = text
    this.i = 0
  }
  Fail(why) {
    throw new Error(`job: ${why} at byte ${this.i}`)
  }
  Space() {
    while (this.i < this.s.length && ' \t\r\n'.includes(this.s[this.i])) this.i++
  }
  Value(depth) {
    if (depth > 8) this.Fail('nesting too deep')
    this.Space()
    const c = this.s[this.i]
    if (c === '{') return this.Object(depth)
    if (c === '[') return this.Array(depth)
    if (c === '"') return this.String()
    if (c === '-' || (c >= '0' && c <= '9')) return this.Integer()
    for (const [word, v] of [['true', true], ['false', false], ['null', null]]) {
      if (this.s.startsWith(word, this.i)) {
        this.i += word.length
        return v
      }
    }
    return this.Fail('unexpected character')
  }
  Object(depth) {
    const out = new Map()
    this.i++
    this.Space()
    if (this.s[this.i] === '}') {
      this.i++
      return out
    }
    for (;;) {
      this.Space()
      if (this.s[this.i] !== '"') this.Fail('want a key')
      const key = this.String()
      if (out.has(key)) this.Fail(`key ${JSON.stringify(key)} twice`)
      this.Space()
      if (this.s[this.i++] !== ':') this.Fail('want ":"')
      out.set(key, this.Value(depth + 1))
      this.Space()
      const c = this.s[this.i++]
      if (c === '}') return out
      if (c !== ',') this.Fail('want "," or "}"')
    }
  }
  Array(depth) {
    const out = []
    this.i++
    this.Space()
    if (this.s[this.i] === ']') {
      this.i++
      return out
    }
    for (;;) {
      out.push(this.Value(depth + 1))
      this.Space()
      const c = this.s[this.i++]
      if (c === ']') return out
      if (c !== ',') this.Fail('want "," or "]"')
    }
  }
  String() {
    // RFC 8259: no raw control characters; escapes are JSON.parse's.
    const m = /^"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/.exec(this.s.slice(this.i))
    if (!m) this.Fail('bad string')
    this.i += m[0].length
    return JSON.parse(m[0])
  }
  Integer() {
    const m = /^-?(?:0|[1-9][0-9]*)/.exec(this.s.slice(this.i, this.i + 32))
    if (!m) this.Fail('bad number')
    this.i += m[0].length
    if (/^[.eE0-9]/.test(this.s.slice(this.i, this.i + 1))) this.Fail('integers only')
    const v = BigInt(m[0])
    if (v < -(1n << 63n) || v >= 1n << 63n) this.Fail('integer outside int64')
    return v
  }
}

function ParseJob(line) {
  const r = new JsonReader(line)
  r.Space()
  if (r.s[r.i] !== '{') r.Fail('want an object')
  const obj = r.Value(0)
  r.Space()
  if (r.i !== r.s.length) r.Fail('text after the object')
  const known = ['bootstrap', 'topics', 'messages', 'keys', 'burst', 'interval_us',
    'value_bytes', 'close_at_us', 'flush_timeout_ms', 'config']
  for (const k of obj.keys()) {
    if (!known.includes(k)) throw new Error(`job key ${JSON.stringify(k)}: not a job key`)
  }
  for (const k of known) {
    if (!obj.has(k)) throw new Error(`job key ${JSON.stringify(k)}: missing`)
  }
  const int = (k, lo, hi) => {
    const v = obj.get(k)
    if (typeof v !== 'bigint' || v < BigInt(lo) || v > BigInt(hi)) {
      throw new Error(`job key ${JSON.stringify(k)}: want an integer in [${lo}, ${hi}], got ${
        typeof v === 'bigint' ? v : JSON.stringify(v)}`)
    }
    return Number(v)
  }
  const job = {
    messages: int('messages', 0, 1e7),
    keys: int('keys', 0, 1e7),
    burst: int('burst', 1, 1e7),
    interval_us: int('interval_us', 0, 3.6e9),
    value_bytes: int('value_bytes', 0, 16 << 20),
    close_at_us: int('close_at_us', -1, 8.64e10),
    flush_timeout_ms: int('flush_timeout_ms', 0, 3.6e6),
  }
  const bootstrap = obj.get('bootstrap')
  if (typeof bootstrap !== 'string' || bootstrap === '') {
    throw new Error('job key "bootstrap": want a non-empty string')
  }
  job.brokers = bootstrap.split(',')
  const topics = obj.get('topics')
  if (!Array.isArray(topics) || topics.length < 1 || topics.length > 1000 ||
      !topics.every(t => typeof t === 'string' && Buffer.byteLength(t) >= 1 && Buffer.byteLength(t) <= 249)) {
    throw new Error('job key "topics": want 1..1000 strings of 1..249 bytes')
  }
  job.topics = topics
  const config = obj.get('config')
  if (!Array.isArray(config) || config.length > 1000 ||
      !config.every(p => Array.isArray(p) && p.length === 2 && p.every(s => typeof s === 'string'))) {
    throw new Error('job key "config": want at most 1000 [name, value] string pairs')
  }
  job.config = config
  return job
}

// ---------------------------------------------------------------------------
// Configuration. The job's pairs come in order: first prodsim's scenario
// field names (wire/drivers.cc ScenarioNames), then the scenario's
// [clients.kafkajs] table under kafkajs's own option names and the driver's
// two options; a later pair for the same setting wins. README.md has the
// tables.

// Fields with no kafkajs equivalent, accepted and not applied (README.md
// says why for each).
const kIgnored = new Set(['flush_messages', 'flush_bytes', 'flush_frequency', 'flush_max_messages',
  'max_message_bytes', 'channel_buffer_size', 'metadata_retry_max', 'metadata_retry_backoff',
  'return_successes', 'return_errors', 'version'])

const kMsMax = 2147483647 // kafkajs passes these to setTimeout, which wants an int32

function ParseConfig(pairs) {
  const c = {
    idempotent: undefined, max_in_flight: undefined, acks: undefined, timeout_ms: undefined,
    retries: undefined, retry_backoff_ms: undefined, retry_max_ms: undefined,
    retry_factor: undefined, retry_multiplier: undefined, request_timeout_ms: undefined,
    enforce_request_timeout: undefined, connection_timeout_ms: undefined,
    concurrent_sends: 1, messages_per_send: 1,
  }
  const bad = (name, value, want) => {
    throw new Error(`config ${JSON.stringify(name)}: want ${want}, got ${JSON.stringify(value)}`)
  }
  const int = (name, value, lo, hi) => {
    if (!/^-?(0|[1-9][0-9]{0,9})$/.test(value) || Number(value) < lo || Number(value) > hi) {
      bad(name, value, `an integer in [${lo}, ${hi}]`)
    }
    return Number(value)
  }
  const bool = (name, value) => {
    if (value !== 'true' && value !== 'false') bad(name, value, '"true" or "false"')
    return value === 'true'
  }
  // A decimal number without exponent, e.g. "0.2" (TOML floats are not
  // passed, so a scenario writes it as a string).
  const decimal = (name, value, lo, hi) => {
    if (!/^(0|[1-9][0-9]{0,5})(\.[0-9]{1,9})?$/.test(value) || Number(value) < lo || Number(value) > hi) {
      bad(name, value, `a decimal number in [${lo}, ${hi}] (e.g. "0.2")`)
    }
    return Number(value)
  }
  // Scenario durations come as whole milliseconds with "ms" (wire/drivers.cc
  // Ms); kafkajs's own options take a plain integer of milliseconds.
  const ms = (name, value) => {
    const m = /^(0|[1-9][0-9]{0,9})ms$/.exec(value)
    if (!m || Number(m[1]) > kMsMax) bad(name, value, `milliseconds as "<n>ms", at most ${kMsMax}ms`)
    return Number(m[1])
  }
  const kjsMs = (name, value, lo) => int(name, value, lo, kMsMax)
  for (const [name, value] of pairs) {
    switch (name) {
      // prodsim's scenario fields ([producer]).
      case 'idempotent': c.idempotent = bool(name, value); break
      case 'net_max_open_requests': c.max_in_flight = int(name, value, 1, 1000000); break
      case 'required_acks': c.acks = int(name, value, -1, 1); break
      // `timeout` is both a scenario field ("<n>ms") and send()'s own option
      // (an integer of milliseconds): either form.
      case 'timeout': c.timeout_ms = /ms$/.test(value) ? ms(name, value) : kjsMs(name, value, 0); break
      case 'retry_max': c.retries = int(name, value, 0, 2147483647); break
      case 'retry_backoff': c.retry_backoff_ms = ms(name, value); break
      case 'net_read_timeout': c.request_timeout_ms = ms(name, value); break
      case 'net_dial_timeout': c.connection_timeout_ms = ms(name, value); break
      // The driver's own ([clients.kafkajs]).
      case 'concurrent_sends': c.concurrent_sends = int(name, value, 1, 1000); break
      case 'messages_per_send': c.messages_per_send = int(name, value, 1, 1000); break
      // kafkajs's option names ([clients.kafkajs]), in kafkajs's units.
      case 'maxInFlightRequests': c.max_in_flight = int(name, value, 1, 1000000); break
      case 'requestTimeout': c.request_timeout_ms = kjsMs(name, value, 1); break
      case 'connectionTimeout': c.connection_timeout_ms = kjsMs(name, value, 1); break
      case 'enforceRequestTimeout': c.enforce_request_timeout = bool(name, value); break
      case 'retry.retries': c.retries = int(name, value, 0, 2147483647); break
      case 'retry.initialRetryTime': c.retry_backoff_ms = kjsMs(name, value, 0); break
      case 'retry.maxRetryTime': c.retry_max_ms = kjsMs(name, value, 0); break
      case 'retry.factor': c.retry_factor = decimal(name, value, 0, 1); break
      case 'retry.multiplier': c.retry_multiplier = decimal(name, value, 1, 100); break
      case 'acks': c.acks = int(name, value, -1, 1); break
      // send()'s compression: kafkajs carries GZIP itself; Snappy, LZ4 and
      // ZSTD need codec packages the driver does not install.
      case 'compression':
        if (value !== 'none' && value !== 'gzip') bad(name, value, '"none" or "gzip" (kafkajs has no other codec without a plugin)')
        c.compression = value
        break
      // timeout: above (the same name as the scenario field)
      default:
        if (!kIgnored.has(name)) throw new Error(`config ${JSON.stringify(name)}: not a setting this driver knows`)
    }
  }
  return c
}

// Only what the job set is passed: kafkajs's defaults apply otherwise.
function KafkaOptions(job, c, kafkajs) {
  const o = {
    clientId: 'prodsim-kafkajs',
    brokers: job.brokers,
    logLevel: kafkajs.logLevel.ERROR,
    logCreator: StderrLogCreator,
  }
  if (lockstep) o.socketFactory = lockstep.SocketFactory
  if (c.request_timeout_ms !== undefined) o.requestTimeout = c.request_timeout_ms
  if (c.enforce_request_timeout !== undefined) o.enforceRequestTimeout = c.enforce_request_timeout
  if (c.connection_timeout_ms !== undefined) o.connectionTimeout = c.connection_timeout_ms
  return o
}

// `partitioner`: kafkajs's DefaultPartitioner wrapped to note each message's
// partition (ChoosingPartitioner below).
function ProducerOptions(c, partitioner) {
  const o = { createPartitioner: partitioner }
  if (c.idempotent !== undefined) o.idempotent = c.idempotent
  if (c.max_in_flight !== undefined) o.maxInFlightRequests = c.max_in_flight
  // kafkajs merges the producer's `retry` over its defaults field by field
  // (retries 5, initialRetryTime 300, factor 0.2, multiplier 2, maxRetryTime
  // 30000), so passing only one field keeps the others.
  const retry = {}
  if (c.retries !== undefined) retry.retries = c.retries
  if (c.retry_backoff_ms !== undefined) retry.initialRetryTime = c.retry_backoff_ms
  if (c.retry_max_ms !== undefined) retry.maxRetryTime = c.retry_max_ms
  if (c.retry_factor !== undefined) retry.factor = c.retry_factor
  if (c.retry_multiplier !== undefined) retry.multiplier = c.retry_multiplier
  if (Object.keys(retry).length > 0) o.retry = retry
  return o
}

// kafkajs's log, one JSON line per entry, on stderr only: its default
// logger writes info to stdout, which carries the protocol.
function StderrLogCreator() {
  return ({ namespace, level, label, log }) => {
    const { message, timestamp, ...extra } = log
    process.stderr.write(`${timestamp} ${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
  }
}

// The client module: $PRODSIM_KAFKAJS_MODULE (a package name resolved from
// here and NODE_PATH, or a module directory), else kafkajs. Its name and
// version for the start line are its own package.json's.
function LoadClient() {
  const module = process.env.PRODSIM_KAFKAJS_MODULE || 'kafkajs'
  const kafkajs = require(module)
  const pkg = require(require.resolve(path.join(module, 'package.json')))
  return { kafkajs, name: String(pkg.name), version: String(pkg.version) }
}

// ---------------------------------------------------------------------------
// Partitions and outcomes

// kafkajs's DefaultPartitioner (set explicitly: murmur2 of the key as the
// Java client, kafkajs's default since 2.0.0), with each message's choice
// noted in `chosen` (message object -> {partition, changed}) for the
// messages the driver registered there. kafkajs partitions every message of
// a call again on each attempt (sendMessages.js:40-45), so `changed` says an
// attempt chose another partition than the one before (null keys go round
// robin; a key always gives the same partition while the partition count
// stays).
function ChoosingPartitioner(kafkajs, chosen) {
  return () => {
    const inner = kafkajs.Partitioners.DefaultPartitioner()
    return args => {
      const p = inner(args)
      const seen = chosen.get(args.message)
      if (seen !== undefined) {
        if (seen.partition !== undefined && seen.partition !== p) seen.changed = true
        seen.partition = p
      }
      return p
    }
  }
}

// The Kafka error code under a kafkajs error: KafkaJSNumberOfRetriesExceeded
// and KafkaJSNonRetriableError wrap the last error in `cause`; a
// KafkaJSProtocolError carries Kafka's code. -1: no broker error (a local
// one: connection, timeout, lock, ...).
function KafkaCode(e) {
  for (let i = 0; e && i < 8; i++, e = e.cause) {
    if (e.name === 'KafkaJSProtocolError' && Number.isInteger(e.code)) return e.code
  }
  return -1
}

const kOffset = /^-?[0-9]{1,19}$/

// A resolved call: one `ack` per message, in the call's order. kafkajs
// resolves with one RecordMetadata per partition of the call
// (responseSerializer.js), whose baseOffset is that partition's batch's
// first offset; the call's messages to one partition are that batch's
// records in call order (groupMessagesPerPartition.js, createTopicData.js),
// so a message's offset is baseOffset plus its index among them. -1
// ("written, offset unknown") where that cannot be known: no metadata
// (acks=0), or attempts of the call put its messages on different partitions.
function OnAcks(call, metadata, chosen) {
  const list = Array.isArray(metadata) ? metadata : []
  const single = call.ids.length === 1
  const base = new Map() // partition -> baseOffset (decimal string)
  for (const m of list) {
    if (m && m.topicName === call.topic && Number.isInteger(m.partition) && kOffset.test(String(m.baseOffset))) {
      base.set(m.partition, String(m.baseOffset))
    }
  }
  const changed = call.messages.some(msg => (chosen.get(msg) || {}).changed)
  const index = new Map() // partition -> messages of the call seen so far
  call.ids.forEach((id, i) => {
    const seen = chosen.get(call.messages[i]) || {}
    let partition = Number.isInteger(seen.partition) ? seen.partition : -1
    let offset = '-1'
    if (list.length === 0) {
      partition = -1 // acks=0: kafkajs reads no response
    } else if (single && list.length === 1 && base.size === 1) {
      // One message, one RecordMetadata: its partition and offset whatever
      // the attempts chose (as kafkajs reports it).
      ;[[partition, offset]] = base.entries()
    } else if (!changed && base.has(partition)) {
      const k = index.get(partition) || 0
      index.set(partition, k + 1)
      offset = (BigInt(base.get(partition)) + BigInt(k)).toString()
    }
    Emit('ack', [['id', id], ['partition', partition], ['offset', offset, true]])
  })
}

// A rejected call: one `error` per message. kafkajs does not say whether
// the call is in the log (an error can follow a written batch), and has no
// fatal state (README.md). `partition` is the partition kafkajs's last
// attempt chose, -1 if none.
function OnErrors(call, e, chosen) {
  const code = KafkaCode(e)
  const name = String((e && e.name) || 'Error')
  const text = String((e && e.message) || e)
  call.ids.forEach((id, i) => {
    const seen = chosen.get(call.messages[i]) || {}
    Emit('error', [['id', id], ['partition', Number.isInteger(seen.partition) ? seen.partition : -1],
      ['code', code], ['name', name], ['text', text], ['status', 'unknown'], ['fatal', false]])
  })
}

// ---------------------------------------------------------------------------
// The run

function Sleep(ms) {
  return new Promise(resolve => setTimeout(resolve, Math.max(0, ms)))
}

// Resolves true once `done()` holds, false at `deadline_us`, whichever is
// first. `state.wake` is called when something settles or starts.
function WaitFor(state, done, deadline_us) {
  return new Promise(resolve => {
    const check = () => {
      clearTimeout(state.timer)
      if (done()) return resolve(true)
      const left_ms = (deadline_us - NowUs()) / 1000
      if (left_ms <= 0) return resolve(false)
      state.wake = check
      state.timer = setTimeout(check, Math.min(left_ms, 100))
    }
    check()
  }).finally(() => {
    state.wake = null
    clearTimeout(state.timer)
  })
}

function Wake(state) {
  if (state.wake) state.wake()
}

// Tries producer.connect() until it succeeds, as a service that needs its
// producer does, for at most kConnectWaitMsMax (or until close_at); true
// once connected. An application must not send before connect() resolved:
// kafkajs would take the send and, for an idempotent producer whose
// InitProducerId failed, write the batch without a producer id, that is
// without idempotence (seen with a lost InitProducerId answer).
async function Connect(producer, close_at_us) {
  const deadline_us = NowUs() + kConnectWaitMsMax * 1000
  for (let attempt = 1; ; attempt++) {
    try {
      await producer.connect()
      return true
    } catch (e) {
      Emit('client_error', [['code', KafkaCode(e)], ['name', String(e.name)],
        ['text', `connect attempt ${attempt}: ${e.message}`]])
      const now = NowUs()
      if (now >= deadline_us || (close_at_us >= 0 && now >= close_at_us)) return false
      await Sleep(kConnectPauseMs)
    }
  }
}

// Never connected: each id is refused at its produce call (an error alone,
// no produce line), once it is due, as an application would report it.
async function Refuse(job, state) {
  // Given up at close_at: the ids were never reached, and print nothing.
  const last = job.close_at_us >= 0 ? 0 : job.messages
  for (let id = 1; id <= last; id++) {
    Emit('error', [['id', id], ['partition', -1], ['code', -1], ['name', 'NotConnected'],
      ['text', 'producer.connect() never succeeded; not sent'], ['status', 'not_persisted'],
      ['fatal', false]])
  }
  state.next_id = job.messages + 1
}

// The calls: from id `first`, up to messages_per_send consecutive ids that
// go to the same topic (the job's message i goes to topics[(i-1) % len], so
// with several topics consecutive ids alternate and every call carries
// one). Fixed by the job alone, not by timing.
function NextCall(job, c, first) {
  const topic = job.topics[(first - 1) % job.topics.length]
  let last = first
  while (last < job.messages && last - first + 1 < c.messages_per_send &&
         job.topics[last % job.topics.length] === topic) {
    last++
  }
  return { first, last, topic }
}

// Starts every call that may start now: its last id is due, fewer than
// concurrent_sends calls are in flight, and closing has not begun.
function Pump(job, producer, c, state) {
  while (!state.closing && state.next_id <= job.messages && state.in_flight < c.concurrent_sends) {
    const plan = NextCall(job, c, state.next_id)
    if (plan.last > state.due_through) break
    state.next_id = plan.last + 1
    StartCall(job, producer, c, state, plan)
  }
  Wake(state)
}

function StartCall(job, producer, c, state, plan) {
  const call = { number: state.calls++, topic: plan.topic, ids: [], messages: [] }
  for (let id = plan.first; id <= plan.last; id++) {
    const key = job.keys > 0 ? `key-${(id - 1) % job.keys}` : null
    const message = { key, value: state.value, headers: { 'prodsim-id': String(id) } }
    call.ids.push(id)
    call.messages.push(message)
    state.chosen.set(message, { partition: undefined, changed: false })
  }
  const send = { topic: call.topic, messages: call.messages }
  if (c.acks !== undefined) send.acks = c.acks
  if (c.timeout_ms !== undefined) send.timeout = c.timeout_ms
  if (c.compression === 'gzip') send.compression = state.gzip
  state.in_flight++
  state.pending += call.ids.length
  // kafkajs's send() is an async function: it never refuses synchronously,
  // so every id of the call prints `produce` once the promise exists.
  const p = producer.send(send)
  for (const [i, id] of call.ids.entries()) {
    Emit('produce', [['id', id], ['topic', call.topic], ['key', call.messages[i].key], ['call', call.number]])
  }
  p.then(m => OnAcks(call, m, state.chosen), e => OnErrors(call, e, state.chosen)).finally(() => {
    for (const m of call.messages) state.chosen.delete(m)
    state.in_flight--
    state.pending -= call.ids.length
    Pump(job, producer, c, state)
  })
}

async function Produce(job, producer, c, state) {
  const stop_us = job.close_at_us
  // As the model's application (scenarios/runner.cc Application): the
  // first burst once the producer exists, each next one interval_us after
  // the previous one was handed over (to the driver's queue of calls).
  for (let b = 0; state.due_through < job.messages; b++) {
    const due_us = b === 0 ? 0 : NowUs() + job.interval_us
    for (;;) {
      const now = NowUs()
      if (stop_us >= 0 && now >= stop_us) return
      const wait_us = (stop_us >= 0 ? Math.min(due_us, stop_us) : due_us) - now
      if (wait_us <= 0) break
      await Sleep(wait_us / 1000)
    }
    if (stop_us >= 0 && NowUs() >= stop_us) return
    state.due_through = Math.min(job.messages, state.due_through + job.burst)
    Pump(job, producer, c, state)
    // Let the event loop run between bursts, so that responses are read
    // while a long burst list is handed over.
    await Sleep(0)
  }
}

function WithTimeout(promise, ms) {
  let timer
  return Promise.race([promise.catch(() => {}), new Promise(resolve => { timer = setTimeout(resolve, ms) })])
    .finally(() => clearTimeout(timer))
}

async function Close(job, producer, state) {
  // After the last message (no close_at): every call is started (each may
  // wait for a free slot) before closing, for at most flush_timeout_ms; at
  // close_at, or past that wait: the calls not yet started are never made,
  // and their ids print nothing.
  if (job.close_at_us < 0) {
    await WaitFor(state, () => state.next_id > job.messages, NowUs() + job.flush_timeout_ms * 1000)
  }
  state.closing = true
  // The calls never started for want of a free slot (their ids print
  // nothing): said, so that prodsim does not take them for a driver that
  // skipped its job (client-lost-messages).
  const unoffered = job.close_at_us < 0 ? Math.max(0, job.messages - (state.next_id - 1)) : 0
  Emit('closing', [['outstanding', state.pending], ['unoffered', unoffered]])
  const flushed = await WaitFor(state, () => state.pending === 0, NowUs() + job.flush_timeout_ms * 1000)
  // kafkajs has no purge: disconnect() closes the connections, which fails
  // the requests in flight; their sends may report (or may retry and hang),
  // so the reports get a bounded wait.
  const disconnected = WithTimeout(producer.disconnect(), kDisconnectWaitMs)
  if (!flushed) await WaitFor(state, () => state.pending === 0, NowUs() + kPurgeWaitMs * 1000)
  await disconnected
  Emit('closed', [['outstanding', state.pending], ['flush', flushed ? 'ok' : 'timed_out']])
}

function ReadJobLine() {
  if (kLockstepJob) return kLockstepJob
  return new Promise((resolve, reject) => {
    let text = ''
    process.stdin.setEncoding('utf8')
    process.stdin.on('data', chunk => {
      text += chunk
      const nl = text.indexOf('\n')
      if (nl >= 0) {
        process.stdin.destroy()
        resolve(text.slice(0, nl))
      } else if (text.length > kJobBytesMax) {
        reject(new Error(`job: longer than ${kJobBytesMax} bytes`))
      }
    })
    process.stdin.on('end', () => resolve(text))
    process.stdin.on('error', reject)
  })
}

async function Main() {
  let job
  let c
  if (kClock !== undefined && kClock !== 'simulated') {
    return JobError(`PRODSIM_CLOCK=${kClock}: want "simulated" or unset`, 2)
  }
  try {
    job = ParseJob(await ReadJobLine())
    c = ParseConfig(job.config)
  } catch (e) {
    return JobError(e.message, 2)
  }
  let client
  try {
    client = LoadClient()
  } catch (e) {
    return JobError(`cannot load the client module: ${e.message}`, 3)
  }
  const kafkajs = client.kafkajs
  // kafkajs would reject every send of such a producer (messageProducer.js
  // sendBatch); like librdkafka's consistency rules, it is exit 3.
  if (c.idempotent && c.acks !== undefined && c.acks !== -1) {
    return JobError("kafkajs: Not requiring ack for all messages invalidates the idempotent producer's EoS guarantees", 3)
  }
  const state = {
    pending: 0, in_flight: 0, calls: 0, next_id: 1, due_through: 0, closing: false,
    wake: null, timer: null, chosen: new Map(), value: Buffer.alloc(job.value_bytes, 'x'),
    gzip: kafkajs.CompressionTypes.GZIP,
  }
  let producer
  try {
    producer = new kafkajs.Kafka(KafkaOptions(job, c, kafkajs))
      .producer(ProducerOptions(c, ChoosingPartitioner(kafkajs, state.chosen)))
  } catch (e) {
    return JobError(`kafkajs: ${e.message}`, 3)
  }
  const start = [['client', client.name], ['version', client.version]]
  if (c.concurrent_sends > 1) start.push(['order', 'per_call'])
  Emit('start', start)
  producer.on(producer.events.REQUEST_TIMEOUT, ({ payload }) => {
    Emit('client_error', [['code', -1], ['name', 'REQUEST_TIMEOUT'],
      ['text', `request ${payload.apiName} v${payload.apiVersion} to ${payload.broker} timed out`]])
  })
  if (await Connect(producer, job.close_at_us)) {
    await Produce(job, producer, c, state)
  } else {
    await Refuse(job, state)
  }
  await Close(job, producer, state)
  process.exit(0)
}

Main().catch(e => {
  process.stderr.write(`prodsim-kafkajs: ${e && e.stack}\n`)
  process.exit(1)
})
