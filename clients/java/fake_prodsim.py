# A scripted prodsim for prodsim-java (README.md "Testing without prodsim"):
#   python3 fake_prodsim.py OUT_DIR/prodsim-java [STEPS] [THREADS]
# Answers every dial with connected, no broker behind it: shows dials, the
# ApiVersions frame (api key, version), timeouts, errors, closing, closed.
# THREADS (default: none) adds the driver's ["threads", THREADS] pair: the
# start line's "order":"per_call" and the job's ids split among THREADS
# threads (with 2: two metadata waits at once, ids 1 and 2 failing together).
import subprocess, sys, json, os, base64
drv = sys.argv[1]; steps = int(sys.argv[2]) if len(sys.argv) > 2 else 12
threads = sys.argv[3] if len(sys.argv) > 3 else None
job = {"bootstrap":"127.0.0.1:1","topics":["t"],"messages":5,"keys":3,"burst":5,"interval_us":0,"value_bytes":10,
       "close_at_us":-1,"flush_timeout_ms":2000,"config":[["idempotent","true"],["net_max_open_requests","1"],["required_acks","-1"],["delivery.timeout.ms","3000"],["request.timeout.ms","1000"],["max.block.ms","2500"]]}
if threads: job["config"].insert(0, ["threads", threads])
env = dict(os.environ, PRODSIM_CLOCK="simulated", PRODSIM_SEED="1")
p = subprocess.Popen([drv], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, bufsize=1)
p.stdin.write(json.dumps(job) + "\n")
now = 0; inputs = []
out = []
for n in range(steps):
    for l in inputs: p.stdin.write(l + "\n")
    p.stdin.write(json.dumps({"step": n, "now_ns": now, "until_ns": -1}).replace(" ", "") + "\n"); p.stdin.flush()
    inputs = []
    nxt = None
    while True:
        line = p.stdout.readline()
        if not line: print("EOF"); sys.exit(0)
        line = line.rstrip("\n")
        o = json.loads(line)
        k = next(iter(o))
        shown = line
        if k == "write":
            b = base64.b64decode(o["bytes"]); size = int.from_bytes(b[:4], "big"); api = int.from_bytes(b[4:6], "big"); ver = int.from_bytes(b[6:8], "big")
            shown = f'write {o["write"]} frame size={size} api_key={api} version={ver}'
        print(f"[{n} @{now}] {shown}")
        if k == "dial": inputs.append(json.dumps({"connected": o["dial"]}).replace(" ", ""))
        if k == "idle": nxt = o["next_ns"]; now = o["now_ns"]; break
        if k == "exit": print("exit line", o); nxt = -1; break
    if not inputs:
        if nxt == -1: break
        now = nxt
p.stdin.close(); p.wait(); print("exit", p.returncode)
