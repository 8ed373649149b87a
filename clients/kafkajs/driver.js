'use strict'
// prodsim-kafkajs: the driver protocol (clients/README.md) on kafkajs 2.2.4.
//
// One job line on stdin; protocol events on stdout, one JSON object per
// line, each written whole by a single write (stdout is a pipe, and Node
// writes pipes synchronously on Linux); kafkajs's own log goes to stderr.
// Every message is its own producer.send() call, made once the send before
// it has settled: the way an application that needs its messages in order
// uses kafkajs. kafkajs does not keep concurrent send() calls in order (each
// takes a different number of asynchronous steps to its broker's lock; a
// fault-free run with concurrent sends failed per-partition-order in 5 of 5
// trials), so a driver that fired them concurrently would report an order
// the application never asked for. The mapping of prodsim's scenario fields onto
// kafkajs options, and what the driver leaves out, is in README.md here;
// each choice below that is not in the protocol says why.
//
// Invariants: every id handed to send() prints `produce` first and then at
// most one `ack` or `error` (kafkajs settles each promise once); nothing is
// printed after `closed`; every wait has a bound.

const kStartNs = process.hrtime.bigint()

// Bounds (STYLE.md: a limit on everything). The job's own ranges are the
// protocol's; these are the driver's.
const kJobBytesMax = 64 << 20 // the job line (1000 topics of 249 bytes fit easily)
const kConnectAttemptsMax = 3 // producer.connect() calls, each with kafkajs's own retries
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
// Configuration: prodsim's scenario field names (wire/drivers.cc
// ScenarioNames) onto kafkajs options. README.md has the table.

// Fields with no kafkajs equivalent, accepted and not applied (README.md
// says why for each).
const kIgnored = new Set(['flush_messages', 'flush_bytes', 'flush_frequency', 'flush_max_messages',
  'max_message_bytes', 'channel_buffer_size', 'metadata_retry_max', 'metadata_retry_backoff',
  'return_successes', 'return_errors', 'version'])

function ParseConfig(pairs) {
  const c = { idempotent: undefined, max_in_flight: undefined, acks: undefined, timeout_ms: undefined,
    retries: undefined, retry_backoff_ms: undefined, request_timeout_ms: undefined,
    connection_timeout_ms: undefined }
  const bad = (name, value, want) => {
    throw new Error(`config ${JSON.stringify(name)}: want ${want}, got ${JSON.stringify(value)}`)
  }
  const int = (name, value, lo, hi) => {
    if (!/^-?(0|[1-9][0-9]{0,9})$/.test(value) || Number(value) < lo || Number(value) > hi) {
      bad(name, value, `an integer in [${lo}, ${hi}]`)
    }
    return Number(value)
  }
  // Durations come as whole milliseconds with "ms" (wire/drivers.cc Ms).
  const ms = (name, value) => {
    const m = /^(0|[1-9][0-9]{0,9})ms$/.exec(value)
    if (!m || Number(m[1]) > 2147483647) bad(name, value, 'milliseconds as "<n>ms", at most 2147483647ms')
    return Number(m[1])
  }
  for (const [name, value] of pairs) {
    switch (name) {
      case 'idempotent':
        if (value !== 'true' && value !== 'false') bad(name, value, '"true" or "false"')
        c.idempotent = value === 'true'
        break
      case 'net_max_open_requests': c.max_in_flight = int(name, value, 1, 1000000); break
      case 'required_acks': c.acks = int(name, value, -1, 1); break
      case 'timeout': c.timeout_ms = ms(name, value); break
      case 'retry_max': c.retries = int(name, value, 0, 2147483647); break
      case 'retry_backoff': c.retry_backoff_ms = ms(name, value); break
      case 'net_read_timeout': c.request_timeout_ms = ms(name, value); break
      case 'net_dial_timeout': c.connection_timeout_ms = ms(name, value); break
      default:
        if (!kIgnored.has(name)) throw new Error(`config ${JSON.stringify(name)}: not a setting this driver knows`)
    }
  }
  return c
}

// Only what the scenario set is passed: kafkajs's defaults apply otherwise.
function KafkaOptions(job, c, kafkajs) {
  const o = {
    clientId: 'prodsim-kafkajs',
    brokers: job.brokers,
    logLevel: kafkajs.logLevel.ERROR,
    logCreator: StderrLogCreator,
  }
  if (c.request_timeout_ms !== undefined) o.requestTimeout = c.request_timeout_ms
  if (c.connection_timeout_ms !== undefined) o.connectionTimeout = c.connection_timeout_ms
  return o
}

function ProducerOptions(c, kafkajs) {
  // Explicit, so that it is said: murmur2 of the key, as the Java client
  // (kafkajs's default since 2.0.0; LegacyPartitioner is the other one).
  const o = { createPartitioner: kafkajs.Partitioners.DefaultPartitioner }
  if (c.idempotent !== undefined) o.idempotent = c.idempotent
  if (c.max_in_flight !== undefined) o.maxInFlightRequests = c.max_in_flight
  // kafkajs merges the producer's `retry` over its defaults field by field
  // (retries 5, initialRetryTime 300, factor 0.2, multiplier 2, maxRetryTime
  // 30000), so passing only one field keeps the others.
  const retry = {}
  if (c.retries !== undefined) retry.retries = c.retries
  if (c.retry_backoff_ms !== undefined) retry.initialRetryTime = c.retry_backoff_ms
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

// ---------------------------------------------------------------------------
// Outcomes

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

function OnAck(id, metadata) {
  // One message per send: at most one RecordMetadata. acks=0 resolves with
  // none (kafkajs reads no response), so partition and offset are unknown.
  const m = Array.isArray(metadata) && metadata.length > 0 ? metadata[0] : null
  const offset = m && /^-?[0-9]{1,19}$/.test(String(m.baseOffset)) ? String(m.baseOffset) : '-1'
  const partition = m && Number.isInteger(m.partition) ? m.partition : -1
  Emit('ack', [['id', id], ['partition', partition], ['offset', offset, true]])
}

function OnError(id, e) {
  // kafkajs does not say which partition a failed send was for (and picks
  // again on every retry), nor whether it may be in the log; and it has no
  // fatal state (README.md).
  Emit('error', [['id', id], ['partition', -1], ['code', KafkaCode(e)],
    ['name', String((e && e.name) || 'Error')], ['text', String((e && e.message) || e)],
    ['status', 'unknown'], ['fatal', false]])
}

// ---------------------------------------------------------------------------
// The run

function Sleep(ms) {
  return new Promise(resolve => setTimeout(resolve, Math.max(0, ms)))
}

// Resolves when `pending` is empty or at `deadline_us`, whichever is first.
function WaitSettled(state, deadline_us) {
  return new Promise(resolve => {
    const check = () => {
      if (state.pending === 0) return resolve(true)
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

function Settled(state) {
  state.pending--
  if (state.wake) state.wake()
}

async function Connect(producer, close_at_us) {
  for (let attempt = 1; attempt <= kConnectAttemptsMax; attempt++) {
    try {
      await producer.connect()
      return
    } catch (e) {
      Emit('client_error', [['code', KafkaCode(e)], ['name', String(e.name)],
        ['text', `connect attempt ${attempt}: ${e.message}`]])
      if (close_at_us >= 0 && NowUs() >= close_at_us) return
    }
  }
  // Given up: the workload goes on, and kafkajs refuses each send ("The
  // producer is disconnected"), which reports every id.
}

async function Produce(job, producer, c, state) {
  const value = Buffer.alloc(job.value_bytes, 'x')
  const stop_us = job.close_at_us
  let id = 1
  // As the model's application (scenarios/runner.cc Application): the
  // first burst once the producer exists, each next one interval_us after
  // the previous one was handed over.
  for (let b = 0; id <= job.messages; b++) {
    const due_us = b === 0 ? 0 : NowUs() + job.interval_us
    for (;;) {
      const now = NowUs()
      if (stop_us >= 0 && now >= stop_us) return
      const wait_us = (stop_us >= 0 ? Math.min(due_us, stop_us) : due_us) - now
      if (wait_us <= 0) break
      await Sleep(wait_us / 1000)
    }
    if (stop_us >= 0 && NowUs() >= stop_us) return
    for (let k = 0; k < job.burst && id <= job.messages; k++, id++) {
      const topic = job.topics[(id - 1) % job.topics.length]
      const key = job.keys > 0 ? `key-${(id - 1) % job.keys}` : null
      const send = { topic, messages: [{ key, value, headers: { 'prodsim-id': String(id) } }] }
      if (c.acks !== undefined) send.acks = c.acks
      if (c.timeout_ms !== undefined) send.timeout = c.timeout_ms
      const this_id = id
      state.pending++
      state.chain = state.chain.then(() => {
        // Closing began while this one waited its turn: it was never handed
        // to kafkajs, and prints nothing (clients/README.md).
        if (state.closing) return Settled(state)
        const p = producer.send(send)
        Emit('produce', [['id', this_id], ['topic', topic], ['key', key]])
        return p.then(m => OnAck(this_id, m), e => OnError(this_id, e)).finally(() => Settled(state))
      })
    }
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
  // After the last message (no close_at): every message is sent, one after
  // another, before closing; at close_at: the ones still waiting their turn
  // are never sent.
  if (job.close_at_us < 0) {
    await WithTimeout(state.chain, job.flush_timeout_ms)
  }
  state.closing = true
  Emit('closing', [['outstanding', state.pending]])
  const flushed = await WaitSettled(state, NowUs() + job.flush_timeout_ms * 1000)
  // kafkajs has no purge: disconnect() closes the connections, which fails
  // the requests in flight; their sends may report (or may retry and hang),
  // so the reports get a bounded wait.
  const disconnected = WithTimeout(producer.disconnect(), kDisconnectWaitMs)
  if (!flushed) await WaitSettled(state, NowUs() + kPurgeWaitMs * 1000)
  await disconnected
  Emit('closed', [['outstanding', state.pending], ['flush', flushed ? 'ok' : 'timed_out']])
}

function ReadJobLine() {
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
  try {
    job = ParseJob(await ReadJobLine())
    c = ParseConfig(job.config)
  } catch (e) {
    return JobError(e.message, 2)
  }
  const kafkajs = require('kafkajs')
  // kafkajs would reject every send of such a producer (messageProducer.js
  // sendBatch); like librdkafka's consistency rules, it is exit 3.
  if (c.idempotent && c.acks !== undefined && c.acks !== -1) {
    return JobError("kafkajs: Not requiring ack for all messages invalidates the idempotent producer's EoS guarantees", 3)
  }
  let producer
  try {
    producer = new kafkajs.Kafka(KafkaOptions(job, c, kafkajs)).producer(ProducerOptions(c, kafkajs))
  } catch (e) {
    return JobError(`kafkajs: ${e.message}`, 3)
  }
  Emit('start', [['client', 'kafkajs'], ['version', require('kafkajs/package.json').version]])
  producer.on(producer.events.REQUEST_TIMEOUT, ({ payload }) => {
    Emit('client_error', [['code', -1], ['name', 'REQUEST_TIMEOUT'],
      ['text', `request ${payload.apiName} v${payload.apiVersion} to ${payload.broker} timed out`]])
  })
  const state = { pending: 0, wake: null, timer: null, chain: Promise.resolve(), closing: false }
  await Connect(producer, job.close_at_us)
  await Produce(job, producer, c, state)
  await Close(job, producer, state)
  process.exit(0)
}

Main().catch(e => {
  process.stderr.write(`prodsim-kafkajs: ${e && e.stack}\n`)
  process.exit(1)
})
