#!/usr/bin/env python3
# Classifies a deterministic sample of explore's failing files by mechanism,
# from their traces: the note retryBatch writes when shutdown fails a batch
# (the close-during-retry finding about Sarama main), then the deciding
# check and whether an epoch bump came before the decisive event. A stopgap
# for README's figures until failure signatures exist (issue 18).
#   tools/classify_findings.py PRODSIM N DIR...
import glob, os, re, subprocess, sys, collections, random
if len(sys.argv) < 4: sys.exit('usage: classify_findings.py PRODSIM N DIR...')
P = sys.argv[1]
n = int(sys.argv[2]); files = []
for d in sys.argv[3:]: files += sorted(glob.glob(d + '/*.toml'))
trace = os.path.join(os.environ.get('TMPDIR', '/tmp'), 'classify_findings.%d.trace' % os.getpid())
random.Random(2026).shuffle(files); files = files[:n]
counts = collections.Counter(); examples = {}
for f in files:
    out = subprocess.run([P, 'run', f, '--trace=' + trace], capture_output=True, text=True).stdout
    tr = open(trace).read()
    first = out.splitlines()[0]
    check = re.search(r'\[(\S+)\]', first); check = check.group(1) if check else re.search(r': (\S+)', first).group(1)
    notes = [l for l in tr.splitlines() if ' note ' in l]
    shutdown = any('shutting down, batch failed' in l for l in notes)
    def before(pat_a, pat_b):
        ia = next((i for i, l in enumerate(notes) if re.search(pat_a, l)), None)
        ib = next((i for i, l in enumerate(notes) if re.search(pat_b, l)), None)
        return ia is not None and ib is not None and ia < ib
    if shutdown:
        kind = 'close-during-retry (retryBatch fails a written batch with ErrShuttingDown)'
    elif check == 'acked-are-durable' and re.search(r'holds id=\d+; id=\d+ is in no final log', out):
        kind = 'epoch cascade: acknowledged as the duplicate of another message'
    elif check == 'acked-are-durable':
        kind = 'acked-are-durable, other'
    elif check == 'no-producer-assertion':
        kind = ('assertion after an epoch bump' if before(r'epoch bumped', r'produceSet.add failed')
                else 'assertion without an earlier epoch bump (retry order)')
    elif check == 'no-broker-sequence-error':
        kind = ('OUT_OF_ORDER after an epoch bump' if before(r'epoch bumped', r'OUT_OF_ORDER_SEQUENCE_NUMBER')
                else 'OUT_OF_ORDER without an epoch bump (regrouped or reordered retry)')
    elif check == 'log-sequences-contiguous':
        kind = 'sequence gap in a log'
    elif check == 'acked-batches-in-order':
        kind = 'acknowledgements out of sequence order'
    else:
        kind = check
    counts[kind] += 1; examples.setdefault(kind, f)
for k, c in counts.most_common():
    print('%5d  %5.1f%%  %s  (e.g. %s)' % (c, 100.0 * c / len(files), k, os.path.basename(examples[k])))
print('sample:', len(files))
if os.path.exists(trace): os.remove(trace)
