'use strict'
// Simulated time for prodsim-kafkajs: the lockstep protocol of
// clients/README.md ("Simulated time"), prodsim's scheduler the only clock.
//
// Required by driver.js first thing when PRODSIM_CLOCK=simulated, before
// kafkajs loads, because kafkajs and its dependencies capture what they use
// at load time (gzip.js promisifies zlib.gzip once). Install() makes the
// Node process a pure function of the job, the seed and the step lines:
//   - time: @sinonjs/fake-timers (pinned in package-lock.json) fakes
//     setTimeout, setInterval, Date, process.hrtime and performance.now, the
//     only clocks kafkajs reads (retry/index.js, connection.js,
//     requestQueue/, utils/sleep.js, lock.js, waitFor.js); the driver's own
//     timers are kafkajs's kind. setImmediate and process.nextTick stay
//     real: they are how a step lets promise continuations run, and kafkajs
//     calls neither.
//   - randomness: Math.random (retry jitter, retry/index.js; broker
//     shuffles, utils/shuffle.js) and crypto's getRandomValues/randomBytes
//     (the legacy partitioner's round-robin counter, partitioners/legacy/
//     randomBytes.js) draw from one xorshift128+ stream seeded by
//     PRODSIM_SEED.
//   - sockets: kafkajs's socketFactory option gets LockstepSocket below;
//     nothing opens a real socket.
//   - threads: zlib.gzip and zlib.unzip (kafkajs's GZIP codec) run on
//     libuv's thread pool and finish at a wall-clock moment; they are
//     replaced by the synchronous versions, answered through
//     process.nextTick, so a step never ends while one is running.
//
// A step (the protocol's four parts): the clock moves to now_ns one timer
// at a time (each timer runs with the clock at its own time, then its
// promise continuations run), the inputs are handed over one by one as a
// real socket's events would be (each followed by its continuations), the
// timers that fell due meanwhile run, and the idle line gives the earliest
// pending timer. "Its continuations run" is Settle(): a real setImmediate
// runs only after Node has drained process.nextTick and the microtask
// queue, and nothing else can run in between, since no real I/O is open
// but stdin, which is read only between steps.

const EventEmitter = require('events')
const zlib = require('zlib')
const crypto = require('crypto')
const FakeTimers = require('@sinonjs/fake-timers')

const kChunkBytes = 262144 // the protocol's bound on a write line's bytes
const kSettleRounds = 1 // setImmediate rounds per settle (see Settle)
const kLineBytesMax = 1 << 20

const realSetImmediate = setImmediate
let clock = null
let nextConn = 1
const sockets = new Map() // the driver's connection id -> LockstepSocket

let linesOut = 0 // every line the driver printed (Out and the driver's Emit)
let stepping = null // the step being run: {n, nowNs}, or null between steps
let Flush = () => {} // writes the lines held (Install)

function Out(line) {
  process.stdout.write(line + '\n')
}

// xorshift128+ seeded through splitmix64 from PRODSIM_SEED.
function SeededRandom(seedText) {
  const mask = (1n << 64n) - 1n
  let x = BigInt.asUintN(64, BigInt(seedText))
  const splitmix = () => {
    x = (x + 0x9e3779b97f4a7c15n) & mask
    let z = x
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask
    return z ^ (z >> 31n)
  }
  let s0 = splitmix()
  let s1 = splitmix()
  const next64 = () => {
    let a = s0
    const b = s1
    s0 = b
    a = (a ^ (a << 23n)) & mask
    s1 = a ^ b ^ (a >> 17n) ^ (b >> 26n)
    return (s1 + b) & mask
  }
  return {
    // 53 random bits, as Math.random gives.
    random: () => Number(next64() >> 11n) / 2 ** 53,
    fill: buf => {
      for (let i = 0; i < buf.length; i++) buf[i] = Number(next64() >> 56n)
      return buf
    },
  }
}

// Lets every continuation run: a real setImmediate callback runs only
// after Node has drained process.nextTick and the microtask queue, and
// nothing else is pending (no real I/O is open but stdin, read only between
// steps; zlib is synchronous here), so one round suffices.
function Settle() {
  let p = Promise.resolve()
  for (let i = 0; i < kSettleRounds; i++) p = p.then(() => new Promise(r => realSetImmediate(r)))
  return p
}

// The earliest pending timer's time in ms, or undefined. clock.timers is
// fake-timers' own table (id -> timer with callAt), read here because the
// library has no public peek; the version is pinned.
function NextTimerMs() {
  let at
  if (!clock.timers) return at
  for (const t of clock.timers.values()) {
    if (at === undefined || t.callAt < at) at = t.callAt
  }
  return at
}

// Runs every timer due at or before `ms`, one at a time, each followed by
// its continuations.
async function RunTimersThrough(ms) {
  for (;;) {
    const at = NextTimerMs()
    if (at === undefined || at > ms) return
    clock.next()
    await Settle()
  }
}

// A socket as kafkajs uses one (network/socket.js, connection.js): events
// data, end, error, timeout; write, end, unref. Its bytes are lockstep
// lines.
class LockstepSocket extends EventEmitter {
  constructor(id, onConnect) {
    super()
    this.id = id
    this.onConnect = onConnect
    this.gone = false // closed by either side
  }
  write(data, encoding) {
    if (this.gone) return false
    const buf = Buffer.isBuffer(data) ? data : Buffer.from(data, encoding)
    for (let at = 0; at < buf.length; at += kChunkBytes) {
      const part = buf.subarray(at, Math.min(buf.length, at + kChunkBytes))
      Out(`{"write":${this.id},"bytes":"${part.toString('base64')}"}`)
    }
    return true
  }
  end() {
    if (this.gone) return this
    this.gone = true
    Out(`{"close":${this.id}}`)
    return this
  }
  destroy() {
    return this.end()
  }
  unref() { return this }
  ref() { return this }
  setKeepAlive() { return this }
  setNoDelay() { return this }
  setTimeout() { return this }
  // What prodsim says of the connection.
  Deliver(input) {
    if (input.connected !== undefined) {
      if (this.gone) return
      if (this.onConnect) this.onConnect()
      this.emit('connect')
    } else if (input.data !== undefined) {
      if (this.gone) return
      this.emit('data', Buffer.from(input.bytes, 'base64'))
    } else if (input.closed !== undefined) {
      sockets.delete(this.id)
      if (this.gone) return
      this.gone = true
      if (input.how === 'eof') {
        // Node's default (allowHalfOpen false): 'end', then the socket ends
        // its own side and closes.
        this.emit('end')
        this.emit('close', false)
        return
      }
      const [code, errno, syscall] = {
        reset: ['ECONNRESET', -104, 'read'],
        refused: ['ECONNREFUSED', -111, 'connect'],
        timeout: ['ETIMEDOUT', -110, 'connect'],
      }[input.how] || ['ECONNRESET', -104, 'read']
      const e = new Error(`${syscall} ${code}`)
      Object.assign(e, { code, errno, syscall })
      this.emit('error', e)
      this.emit('close', true)
    }
  }
}

function SocketFactory({ host, port, onConnect }) {
  const id = nextConn++
  const socket = new LockstepSocket(id, onConnect)
  sockets.set(id, socket)
  Out(`{"dial":${id},"host":${JSON.stringify(String(host))},"port":${Number(port)}}`)
  return socket
}

// The protocol's lines from prodsim, checked as strictly as prodsim checks
// the driver's: anything else ends the driver (exit 1, said on stderr).
function ParseInput(line) {
  let v
  try {
    v = JSON.parse(line)
  } catch (e) {
    throw new Error(`lockstep: not JSON: ${line.slice(0, 200)}`)
  }
  const keys = v && typeof v === 'object' ? Object.keys(v) : []
  const want = {
    step: ['step', 'now_ns', 'until_ns'], connected: ['connected'], data: ['data', 'bytes'], closed: ['closed', 'how'],
  }[keys[0]]
  if (!want || keys.join() !== want.join()) throw new Error(`lockstep: unexpected line: ${line.slice(0, 200)}`)
  return v
}

// Installs the fakes; returns { job: Promise of the job line }. REQUIRES:
// called before kafkajs is loaded.
function Install() {
  const seed = process.env.PRODSIM_SEED
  if (!/^[0-9]{1,20}$/.test(seed || '')) throw new Error('lockstep: PRODSIM_SEED must be a decimal uint64')
  const rng = SeededRandom(seed)
  Math.random = rng.random
  const fill = buf => rng.fill(buf)
  if (globalThis.crypto && globalThis.crypto.getRandomValues) {
    Object.defineProperty(globalThis.crypto, 'getRandomValues', { value: a => fill(new Uint8Array(a.buffer, a.byteOffset, a.byteLength)) && a, configurable: true })
  }
  crypto.randomBytes = (n, cb) => {
    const b = fill(Buffer.alloc(n))
    if (cb) process.nextTick(cb, null, b)
    return b
  }
  for (const [name, sync] of [['gzip', zlib.gzipSync], ['unzip', zlib.unzipSync]]) {
    zlib[name] = (buffer, options, cb) => {
      if (typeof options === 'function') [cb, options] = [options, undefined]
      let out
      let err = null
      try {
        out = sync(buffer, options)
      } catch (e) {
        err = e
      }
      process.nextTick(cb, err, out)
    }
  }
  clock = FakeTimers.install({
    now: 0,
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'hrtime', 'performance'],
    loopLimit: 1e9,
  })
  // Node's own rule for a delay (lib/internal/timers.js): anything not in
  // [1, 2^31-1] ms is 1 ms. fake-timers takes 0 (and a fraction below 1) as
  // 0 outside a tick, and a loop that waits 0.5 ms at a time would then
  // never see its clock move.
  const nodeDelay = d => {
    const n = Number(d)
    return n >= 1 && n <= 2147483647 ? n : 1
  }
  for (const name of ['setTimeout', 'setInterval']) {
    const fake = globalThis[name]
    globalThis[name] = (fn, delay, ...args) => fake(fn, nodeDelay(delay), ...args)
  }

  let resolveJob
  const job = new Promise(resolve => { resolveJob = resolve })
  let jobLine = null
  let inputs = []
  let queue = [] // lines read, not yet handled
  let busy = false
  let partial = ''

  const handle = async () => {
    if (busy) return
    busy = true
    try {
      while (queue.length > 0) {
        const line = queue.shift()
        if (jobLine === null) {
          jobLine = line
          continue
        }
        const v = ParseInput(line)
        if (v.step === undefined) {
          inputs.push(v)
          continue
        }
        const printed = linesOut
        stepping = { n: v.step, nowNs: v.now_ns }
        await Step(v.step, v.now_ns, inputs)
        inputs = []
        if (v.step === 0) {
          resolveJob(jobLine)
          await Settle()
          await RunTimersThrough(clock.now)
        }
        // What the step printed changes the simulation before until_ns:
        // no running ahead then.
        const stopped = linesOut === printed ? await RunAhead(v.now_ns, v.until_ns) : v.now_ns
        const next = NextTimerMs()
        stepping = null
        Out(`{"idle":${v.step},"now_ns":${stopped},"next_ns":${next === undefined ? -1 : next * 1e6}}`)
        Flush()
      }
    } catch (e) {
      // The stack, then the message alone: prodsim keeps the last lines.
      process.stderr.write(`prodsim-kafkajs: ${e && e.stack}\nprodsim-kafkajs: lockstep: ${e && e.message}\n`)
      process.exit(1)
    } finally {
      busy = false
    }
  }
  // The driver exits in a step (after its closed line): the exit line says
  // where its clock stopped, since it may have run ahead.
  const exit = process.exit.bind(process)
  process.exit = code => {
    if (stepping) {
      const { n, nowNs } = stepping
      stepping = null
      Out(`{"exit":${n},"now_ns":${Math.max(nowNs, clock.now * 1e6)}}`)
    }
    Flush()
    exit(code)
  }
  // stdout carries nothing but the protocol's lines: they are counted (for
  // RunAhead) and held until the step's last line, then written at once
  // (one write a step instead of one a line; Node writes a pipe
  // synchronously on Linux, so nothing is lost at exit).
  const write = process.stdout.write.bind(process.stdout)
  let held = []
  Flush = () => {
    if (held.length > 0) write(held.join(''))
    held = []
  }
  process.stdout.write = chunk => {
    linesOut++
    held.push(String(chunk))
    return true
  }
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', chunk => {
    partial += chunk
    let nl
    while ((nl = partial.indexOf('\n')) >= 0) {
      queue.push(partial.slice(0, nl))
      partial = partial.slice(nl + 1)
    }
    if (partial.length > kLineBytesMax) {
      process.stderr.write('prodsim-kafkajs: lockstep: a line longer than 1 MiB\n')
      process.exit(1)
    }
    handle()
  })
  // prodsim has gone or is done: nothing will run again.
  process.stdin.on('end', () => process.exit(0))
  return { job }
}

// The client's clock reads whole milliseconds: now_ns rounded down. Node's
// timers are whole milliseconds too, and a delay is at least 1 ms (the clamp
// in Install), so a timer set in a step is due after the step's now_ns.
// (fake-timers' fractional ticks keep a remainder that clock.next() does
// not reset, which would let the clock run up to 1 ms ahead of prodsim's.)
async function Step(n, nowNs, inputs) {
  const nowMs = Math.floor(nowNs / 1e6)
  if (nowMs < clock.now) throw new Error(`step ${n} goes back in time`)
  await RunTimersThrough(nowMs)
  // The rest of the way to now (no timer is due before it).
  if (nowMs > clock.now) clock.tick(nowMs - clock.now)
  for (const input of inputs) {
    const id = input.connected !== undefined ? input.connected : input.data !== undefined ? input.data : input.closed
    const socket = sockets.get(id)
    if (socket) socket.Deliver(input)
    await Settle()
  }
  await Settle()
  await RunTimersThrough(nowMs)
}

// The protocol's run-ahead, after a step that printed nothing: nothing can
// arrive before until_ns (-1: never), so the timers due before it run now, one at a time, until one of them
// makes the client print something (prodsim must see it at its own time).
// Returns where the clock stopped, in ns: the step's now_ns, or that
// timer's time.
async function RunAhead(nowNs, untilNs) {
  let stopped = nowNs
  for (;;) {
    const at = NextTimerMs()
    if (at === undefined || (untilNs >= 0 && at * 1e6 >= untilNs)) return stopped
    const before = linesOut
    clock.next()
    await Settle()
    await RunTimersThrough(clock.now)
    stopped = clock.now * 1e6
    if (linesOut !== before) return stopped
  }
}

module.exports = { Install, SocketFactory }
