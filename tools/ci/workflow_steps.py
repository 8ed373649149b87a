#!/usr/bin/env python3
"""Runs a GitHub Actions workflow's `run:` steps here, job by job, in order.

usage: workflow_steps.py WORKFLOW --job JOB [--job JOB]... [--matrix KEY=VALUE]...
                         [--set NAME=VALUE]... [--prebuilt PRODSIM] [--source DIR]
                         [--workdir DIR] [--keep] [--step-timeout SECONDS]

What GitHub would run, without GitHub (docs/ci.md, "Checking the workflows
offline"). The steps run in a clean copy of the repository, made first:
the files git tracks plus the untracked ones it does not ignore, as they
are in the working tree now (deleted files, node_modules and __pycache__
left out). Not a `git clone`:
a clone holds the last commit, while ctest tests the working tree's build,
so the workflows must be the working tree's too; and not the directory as
it is, which holds builds and scratch files a fresh checkout has not.
Without git (a source tree that is not a work tree, e.g. a tarball
checkout) the copy is the whole tree but build/, .git, .cache,
node_modules and __pycache__.

In that copy, for each JOB (in the order given; a job's `needs` must come
before it), each step in order:
- `run:` is written to a file and run by the step's shell (`bash` as GitHub
  runs it: bash --noprofile --norc -eo pipefail FILE; `sh`: sh -e FILE; no
  shell: bash -e, or sh -e in a job with a `container:`), in the copy's
  root or its `working-directory`, with the workflow's, the job's and the
  step's `env:` over this process's environment, each step bounded by its
  (or its job's) timeout-minutes and by --step-timeout;
- `uses:` is reported as skipped, by name (checkout, artifacts and
  reporters are GitHub's; the copy stands for the checkout, and an
  artifact's upload and download meet at the same path);
- a `run:` that names tools/test.sh is not run (it is the whole suite:
  from inside ctest it would recurse and take 30 minutes): it must be
  exactly README.md's test command (the `bash tools/test.sh` line under
  "The two commands"), and is reported as checked.
`${{ matrix.KEY }}` and `${{ env.NAME }}` are substituted in run, env,
working-directory and names; the matrix entry is the first of the product
of the job's `strategy.matrix` lists unless --matrix picks values. Any
other expression is an error, unless it is the whole value of an env entry
that --set replaces (e.g. NIGHTLY_SEED: ${{ github.run_number }}).
A step's `if:` may be absent or success() (runs while nothing failed),
always(), !cancelled() or success() || failure() (runs anyway), or
failure() (runs after a failure); continue-on-error: true keeps its
failure from counting.

Scale-down: the workflows take their sizes (runs, time, trials) from env
entries; --set NAME=VALUE replaces such an entry's value wherever the
workflow or a selected job defines it (NAME defined nowhere: usage error).
The one substitution of a line's meaning: --prebuilt PRODSIM is handed to
every step as PRODSIM_CI_PREBUILT, which only tools/ci/build.sh reads: it
then links that binary as build/default/bin/prodsim instead of building
(a clean copy has no build; a full build inside ctest takes too long).
Every other line runs as written.

Exit: 0 every step that ran passed; 1 a step failed or timed out; 64 usage
(a bad flag, an unknown job, a --matrix or --set that names nothing); 65
the workflow asks for what this runner does not do, or a tools/test.sh
line is not README's test command; 66 a missing file; 73 the copy cannot
be made. Errors are one line on stderr.
"""

import argparse
import itertools
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import yaml  # Debian 12: python3-yaml (tools/setup.sh)
except ImportError:
    print("workflow_steps.py: python3-yaml is missing (tools/setup.sh installs it)", file=sys.stderr)
    sys.exit(66)

EXIT_STEP_FAILED, EXIT_USAGE, EXIT_WORKFLOW, EXIT_NO_FILE, EXIT_CANT_CREATE = 1, 64, 65, 66, 73
DEFAULT_STEP_TIMEOUT = 1800  # seconds; a step's own timeout-minutes may be shorter
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
ALWAYS = {"always()", "!cancelled()", "success() || failure()", "failure() || success()"}


class Stop(Exception):
    """Ends the run with one line on stderr and an exit code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def parse_args(argv):
    p = argparse.ArgumentParser(prog="workflow_steps.py", add_help=True,
                                description="Runs a workflow's run: steps here (see the file's header).")
    p.add_argument("workflow")
    p.add_argument("--job", action="append", required=True, help="a job to run (repeatable, in order)")
    p.add_argument("--matrix", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="overrides")
    p.add_argument("--prebuilt", metavar="PRODSIM")
    p.add_argument("--source", metavar="DIR")
    p.add_argument("--workdir", metavar="DIR")
    p.add_argument("--keep", action="store_true", help="keep the copy (always kept with --workdir)")
    p.add_argument("--step-timeout", type=int, default=DEFAULT_STEP_TIMEOUT, metavar="SECONDS")

    def error(message):
        raise Stop(EXIT_USAGE, f"usage: {message}")

    p.error = error
    a = p.parse_args(argv)
    if a.step_timeout <= 0:
        raise Stop(EXIT_USAGE, "usage: --step-timeout wants a positive number of seconds")
    return a


def pairs(items, what):
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise Stop(EXIT_USAGE, f"usage: {what} wants NAME=VALUE, got '{item}'")
        out[name] = value
    return out


def source_root(arg):
    if arg:
        root = os.path.abspath(arg)
    else:
        root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    if not os.path.isdir(root):
        raise Stop(EXIT_NO_FILE, f"{root}: no such source directory")
    return root


def tracked_files(root):
    """The copy's files, relative to root; None without git."""
    try:
        inside = subprocess.run(["git", "-C", root, "rev-parse", "--is-inside-work-tree"],
                                capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        return None
    listed = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], capture_output=True, timeout=120)
    if listed.returncode != 0:
        return None
    names = sorted({n.decode() for n in listed.stdout.split(b"\0") if n})
    # Deleted in the working tree but still in the index: not there any more.
    # Installed packages and Python's caches are not sources, ignored or not.
    return [n for n in names if os.path.lexists(os.path.join(root, n))
            and not {"node_modules", "__pycache__"} & set(n.split("/"))]


def walked_files(root):
    skip = {"build", ".git", ".cache", "node_modules", "__pycache__"}
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in skip and not (dirpath == root and d == "out"))
        for f in sorted(filenames):
            out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return out


def make_copy(root, dest):
    files = tracked_files(root)
    how = "the files git tracks and the untracked ones it does not ignore"
    if files is None:
        files = walked_files(root)
        how = "the whole tree but build/, .git, .cache, node_modules (no git work tree)"
    try:
        for rel in files:
            src, dst = os.path.join(root, rel), os.path.join(dest, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.islink(src):
                os.symlink(os.readlink(src), dst)
            elif os.path.isfile(src):
                shutil.copy2(src, dst)
    except OSError as e:
        raise Stop(EXIT_CANT_CREATE, f"cannot copy the repository to {dest}: {e}")
    print(f"workflow_steps: {len(files)} files of {root} copied to {dest} ({how}, as in the "
          "working tree)", flush=True)


def readme_test_command(copy):
    """README.md's test command: the tools/test.sh line under "The two commands"."""
    path = os.path.join(copy, "README.md")
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError:
        raise Stop(EXIT_NO_FILE, f"{path}: cannot read README.md (its test command is checked)")
    in_section = in_code = False
    for line in lines:
        if line.startswith("## "):
            in_section = line.strip() == "## The two commands"
            continue
        if in_section and line.startswith("```"):
            in_code = not in_code
            continue
        if in_section and in_code and "tools/test.sh" in line:
            return line.split("#", 1)[0].strip()
    raise Stop(EXIT_WORKFLOW, "README.md: no tools/test.sh line in the code of \"## The two commands\"")


def load_workflow(path):
    try:
        text = open(path, encoding="utf-8").read()
    except OSError:
        raise Stop(EXIT_NO_FILE, f"{path}: cannot read the workflow")
    try:
        # BaseLoader: every scalar a string, as GitHub reads `on`, numbers and
        # booleans in expressions' places.
        doc = yaml.load(text, Loader=yaml.BaseLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        raise Stop(EXIT_WORKFLOW, f"{path}{where}: not YAML ({getattr(e, 'problem', e)})")
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), dict):
        raise Stop(EXIT_WORKFLOW, f"{path}: no jobs: mapping")
    return doc


class Context:
    """What ${{ }} may name: the matrix entry and the env built so far."""

    def __init__(self, where, matrix, env):
        self.where, self.matrix, self.env = where, matrix, env

    def sub(self, text, what):
        def one(m):
            expr = m.group(1)
            kind, dot, name = expr.partition(".")
            if dot and kind == "matrix" and re.fullmatch(r"[A-Za-z_][\w-]*", name):
                if name not in self.matrix:
                    raise Stop(EXIT_WORKFLOW, f"{self.where}: {what}: ${{{{ {expr} }}}}: the job's "
                               "matrix has no such key")
                return self.matrix[name]
            if dot and kind == "env" and re.fullmatch(r"[A-Za-z_]\w*", name):
                if name not in self.env:
                    raise Stop(EXIT_WORKFLOW, f"{self.where}: {what}: ${{{{ {expr} }}}}: no such env "
                               "entry")
                return self.env[name]
            raise Stop(EXIT_WORKFLOW, f"{self.where}: {what}: ${{{{ {expr} }}}}: only matrix.* and "
                       "env.* are substituted here")
        return EXPRESSION.sub(one, text)

    def env_block(self, block, what, overrides):
        """Evaluates an env: mapping into self.env (in order, as GitHub does)."""
        if block is None:
            return
        if not isinstance(block, dict):
            raise Stop(EXIT_WORKFLOW, f"{self.where}: {what}: env is not a mapping")
        for name, value in block.items():
            if name in overrides:
                self.env[name] = overrides[name]
            else:
                try:
                    self.env[name] = self.sub(str(value), f"{what} env {name}")
                except Stop as e:
                    raise Stop(e.code, f"{e} (or give it a value: --set {name}=VALUE)")


def matrix_entry(job_name, job, picks, used):
    strategy = job.get("strategy") or {}
    matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
    if matrix is None:
        return {}
    if not isinstance(matrix, dict):
        raise Stop(EXIT_WORKFLOW, f"job {job_name}: strategy.matrix is not a mapping of lists")
    for key in ("include", "exclude"):
        if key in matrix:
            raise Stop(EXIT_WORKFLOW, f"job {job_name}: strategy.matrix.{key} is not supported here")
    keys = list(matrix)
    for k in keys:
        if not isinstance(matrix[k], list) or not matrix[k]:
            raise Stop(EXIT_WORKFLOW, f"job {job_name}: strategy.matrix.{k} is not a non-empty list")
    for combo in itertools.product(*(matrix[k] for k in keys)):
        entry = {k: str(v) for k, v in zip(keys, combo)}
        if all(entry.get(k, v) == v for k, v in picks.items() if k in entry):
            for k in picks:
                if k in entry:
                    used.add(k)
            return entry
    raise Stop(EXIT_USAGE, f"usage: job {job_name}: no matrix entry has "
               + ", ".join(f"{k}={v}" for k, v in picks.items() if k in keys))


def shell_command(shell, script, in_container):
    if shell is None:
        shell = "sh" if in_container else "bash-default"
    if shell == "bash-default":
        return ["bash", "-e", script]
    if shell == "bash":
        return ["bash", "--noprofile", "--norc", "-eo", "pipefail", script]
    if shell == "sh":
        return ["sh", "-e", script]
    if "{0}" in shell:
        return [script if part == "{0}" else part for part in shlex.split(shell)]
    raise Stop(EXIT_WORKFLOW, f"shell '{shell}' is not supported here (bash, sh, or a command with {{0}})")


def run_step(argv, cwd, env, timeout):
    """Runs one step in its own process group; returns (exit code, seconds, timed out)."""
    started = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, start_new_session=True)
    except OSError as e:
        print(f"workflow_steps: cannot start {argv[0]}: {e}", file=sys.stderr, flush=True)
        return 127, 0.0, False
    try:
        code = proc.wait(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        code = proc.wait()
        timed_out = True
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    return code, time.monotonic() - started, timed_out


def minutes(value, where):
    if value is None:
        return None
    try:
        m = float(value)
    except ValueError:
        raise Stop(EXIT_WORKFLOW, f"{where}: timeout-minutes '{value}' is not a number")
    if m <= 0:
        raise Stop(EXIT_WORKFLOW, f"{where}: timeout-minutes must be positive")
    return m * 60


def run_job(job_name, job, workflow, ctx, copy, args, readme_cmd, scratch):
    """Runs one job's steps; returns True if every step that ran passed."""
    where = f"job {job_name}"
    if not isinstance(job, dict) or not isinstance(job.get("steps"), list):
        raise Stop(EXIT_WORKFLOW, f"{where}: no steps: list (a reusable workflow call is not run here)")
    if "if" in job:
        raise Stop(EXIT_WORKFLOW, f"{where}: a job-level if: is not supported here")
    in_container = "container" in job
    defaults = {}
    for level in (workflow.get("defaults"), job.get("defaults")):
        if isinstance(level, dict) and isinstance(level.get("run"), dict):
            defaults.update(level["run"])
    job_timeout = minutes(job.get("timeout-minutes"), where)
    failed = False
    steps = job["steps"]
    for i, step in enumerate(steps, 1):
        if not isinstance(step, dict):
            raise Stop(EXIT_WORKFLOW, f"{where}: step {i} is not a mapping")
        label = step.get("name") or step.get("uses") or (str(step.get("run", "")).strip().splitlines()
                                                         or ["(empty run)"])[0]
        try:
            label = ctx.sub(str(label), f"step {i} name")
        except Stop:
            pass  # a name is for display: keep it as written
        head = f"[{job_name}] step {i}/{len(steps)} \"{label}\""
        cond = str(step.get("if", "success()")).strip()
        m = re.fullmatch(r"\$\{\{\s*(.*?)\s*\}\}", cond)
        cond = m.group(1) if m else cond
        if cond == "success()":
            wanted = not failed
        elif cond in ALWAYS:
            wanted = True
        elif cond == "failure()":
            wanted = failed
        else:
            raise Stop(EXIT_WORKFLOW, f"{where}: step {i}: if: {cond} is not supported here "
                       "(success(), always(), !cancelled(), success() || failure(), failure())")
        if "uses" in step:
            print(f"{head}: skipped (uses: {step['uses']}; a GitHub action, not run here)", flush=True)
            continue
        if "run" not in step:
            raise Stop(EXIT_WORKFLOW, f"{where}: step {i} has neither run: nor uses:")
        if not wanted:
            print(f"{head}: skipped (if: {cond}, after a failure)" if failed
                  else f"{head}: skipped (if: {cond})", flush=True)
            continue
        step_env = dict(ctx.env)
        step_ctx = Context(f"{where} step {i}", ctx.matrix, step_env)
        step_ctx.env_block(step.get("env"), f"step {i}", {})
        script = step_ctx.sub(str(step["run"]), f"step {i} run")
        if "tools/test.sh" in script:
            if script.strip() != readme_cmd:
                raise Stop(EXIT_WORKFLOW, f"{where}: step {i} runs '{script.strip()}', not README's "
                           f"test command '{readme_cmd}'")
            print(f"{head}: checked, not run: it is README's test command `{readme_cmd}` (the whole "
                  "suite; from inside ctest it would recurse)", flush=True)
            continue
        cwd = copy
        if "working-directory" in step or "working-directory" in defaults:
            wd = step_ctx.sub(str(step.get("working-directory", defaults.get("working-directory"))),
                              f"step {i} working-directory")
            cwd = os.path.normpath(os.path.join(copy, wd))
        shell = step.get("shell", defaults.get("shell"))
        script_file = os.path.join(scratch, f"{job_name}-step{i}.sh")
        with open(script_file, "w", encoding="utf-8") as f:
            f.write(script)
        argv = shell_command(None if shell is None else str(shell), script_file, in_container)
        timeouts = [args.step_timeout, job_timeout, minutes(step.get("timeout-minutes"), f"{where} step {i}")]
        timeout = min(t for t in timeouts if t is not None)
        env = dict(os.environ)
        env.update(step_env)
        if args.prebuilt:
            env["PRODSIM_CI_PREBUILT"] = args.prebuilt
        print(f"{head}: run", flush=True)
        for line in script.strip().splitlines():
            print(f"  | {line}", flush=True)
        code, secs, timed_out = run_step(argv, cwd, env, timeout)
        verdict = f"timed out after {timeout:.0f} s" if timed_out else f"exit {code}"
        print(f"{head}: {verdict} ({secs:.1f} s)", flush=True)
        if code != 0 or timed_out:
            if str(step.get("continue-on-error", "false")).strip() == "true":
                print(f"{head}: continue-on-error: true, so the job goes on as if it passed", flush=True)
            else:
                failed = True
    return not failed


def main(argv):
    args = parse_args(argv)
    picks = pairs(args.matrix, "--matrix")
    overrides = pairs(args.overrides, "--set")
    root = source_root(args.source)
    if args.prebuilt:
        args.prebuilt = os.path.abspath(args.prebuilt)
        if not (os.path.isfile(args.prebuilt) and os.access(args.prebuilt, os.X_OK)):
            raise Stop(EXIT_NO_FILE, f"--prebuilt {args.prebuilt}: not an executable file")
    workflow_rel = os.path.relpath(os.path.abspath(args.workflow), root) \
        if os.path.isabs(args.workflow) else args.workflow
    if workflow_rel.startswith(".."):
        raise Stop(EXIT_USAGE, f"usage: {args.workflow} is not inside the source tree {root}")
    if not os.path.isfile(os.path.join(root, workflow_rel)):
        raise Stop(EXIT_NO_FILE, f"{args.workflow}: no such workflow file in {root}")
    # Checks before the copy: jobs, --matrix keys, --set names.
    workflow = load_workflow(os.path.join(root, workflow_rel))
    jobs = workflow["jobs"]
    seen = []
    for name in args.job:
        if name not in jobs:
            raise Stop(EXIT_USAGE, f"usage: no job '{name}' in {workflow_rel} (jobs: {', '.join(jobs)})")
        needs = jobs[name].get("needs", []) if isinstance(jobs[name], dict) else []
        for need in [needs] if isinstance(needs, str) else needs:
            if need not in seen:
                raise Stop(EXIT_USAGE, f"usage: job '{name}' needs '{need}': give --job {need} before it")
        seen.append(name)
    defined = set((workflow.get("env") or {}).keys())
    for name in args.job:
        if isinstance(jobs[name], dict):
            defined |= set((jobs[name].get("env") or {}).keys())
    for name in overrides:
        if name not in defined:
            raise Stop(EXIT_USAGE, f"usage: --set {name}: no env entry {name} in the workflow or its "
                       "selected jobs")
    used = set()
    entries = {name: matrix_entry(name, jobs[name], picks, used) for name in args.job}
    for key in picks:
        if key not in used:
            raise Stop(EXIT_USAGE, f"usage: --matrix {key}: no selected job's matrix has that key")
    for name in args.job:  # the env expressions, before anything is copied
        ctx = Context(f"job {name}", entries[name], {})
        ctx.env_block(workflow.get("env"), "workflow", overrides)
        ctx.env_block(jobs[name].get("env") if isinstance(jobs[name], dict) else None,
                      f"job {name}", overrides)

    if args.workdir:
        copy = os.path.abspath(args.workdir)
        if os.path.exists(copy) and (not os.path.isdir(copy) or os.listdir(copy)):
            raise Stop(EXIT_USAGE, f"usage: --workdir {copy} exists and is not an empty directory")
        try:
            os.makedirs(copy, exist_ok=True)
        except OSError as e:
            raise Stop(EXIT_CANT_CREATE, f"cannot make {copy}: {e}")
    else:
        copy = tempfile.mkdtemp(prefix="workflow_steps-")
    scratch = tempfile.mkdtemp(prefix="workflow_steps-scripts-")
    try:
        make_copy(root, copy)
        readme_cmd = readme_test_command(copy)
        workflow = load_workflow(os.path.join(copy, workflow_rel))
        results = {}
        for name in args.job:
            job = workflow["jobs"][name]
            needs = job.get("needs", [])
            needs = [needs] if isinstance(needs, str) else needs
            if any(not results[n] for n in needs):
                print(f"[{name}] skipped: a job it needs failed", flush=True)
                results[name] = False
                continue
            ctx = Context(f"job {name}", entries[name], {})
            ctx.env_block(workflow.get("env"), "workflow", overrides)
            ctx.env_block(job.get("env"), f"job {name}", overrides)
            shown = ", ".join(f"{k}={v}" for k, v in entries[name].items())
            print(f"[{name}] job of {workflow_rel}" + (f", matrix entry {shown}" if shown else ""),
                  flush=True)
            results[name] = run_job(name, job, workflow, ctx, copy, args, readme_cmd, scratch)
            print(f"[{name}] {'passed' if results[name] else 'FAILED'}", flush=True)
        if overrides:
            print("workflow_steps: scaled down: " + ", ".join(f"{k}={v}" for k, v in overrides.items()))
        failed = [n for n, ok in results.items() if not ok]
        print(f"workflow_steps: {workflow_rel}: " + ("every job passed" if not failed
                                                     else "failed: " + ", ".join(failed)), flush=True)
        return EXIT_STEP_FAILED if failed else 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if args.keep or args.workdir:
            print(f"workflow_steps: the copy is kept in {copy}", flush=True)
        else:
            shutil.rmtree(copy, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Stop as stop:
        print(f"workflow_steps.py: {stop}", file=sys.stderr)
        sys.exit(stop.code)
    except KeyboardInterrupt:
        sys.exit(130)
