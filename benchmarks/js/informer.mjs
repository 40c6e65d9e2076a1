// The JavaScript informer the benchmarks compare against: @kubernetes/client-node's
// makeInformer (LIST through the generated CoreV1Api, then its Watch), on the same server and
// the same bytes as the Python variants.
//
//   node informer.mjs '{"mode": "watch"|"sync"|"steady", "url": ..., "scenario": ..., "n": N, ...}'
//
// Prints one JSON line: {"seconds": ..., "items": ...} (watch, sync) or
// {"received": [...], "max_stall": ...} (steady; times on the system's monotonic clock, the
// one Python's time.monotonic() reads).
import * as k8s from '@kubernetes/client-node';

const spec = JSON.parse(process.argv[2]);
const now = () => Number(process.hrtime.bigint()) / 1e9;

const kc = new k8s.KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'bench', server: spec.url, skipTLSVerify: true }],
  users: [{ name: 'bench' }],
  contexts: [{ name: 'bench', cluster: 'bench', user: 'bench' }],
  currentContext: 'bench',
});
const api = kc.makeApiClient(k8s.CoreV1Api);
const namespace = spec.scenario;
const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/pods`, () =>
  api.listNamespacedPod({ namespace }),
);

function finish(result) {
  process.stdout.write(JSON.stringify(result) + '\n', () => process.exit(0));
}

informer.on('error', (err) => {
  console.error('informer error:', err);
  process.exit(1);
});

if (spec.mode === 'watch' || spec.mode === 'sync') {
  // watch: the LIST is empty and n ADDED events follow; sync: the LIST holds n objects.
  let seen = 0;
  let start = 0;
  informer.on('add', () => {
    seen += 1;
    if (seen === spec.n) {
      finish({ seconds: now() - start, items: informer.list().length });
    }
  });
  start = now();
  await informer.start();
} else if (spec.mode === 'steady') {
  const received = new Array(spec.events).fill(0);
  let initial = 0;
  let seen = 0;
  let maxStall = 0;
  let ticking = false;
  const tick = (last) => {
    setTimeout(() => {
      const t = now();
      maxStall = Math.max(maxStall, t - last - 0.001);
      if (ticking) tick(t);
    }, 1);
  };
  informer.on('add', () => {
    initial += 1;
    if (initial === spec.n) {
      fetch(`${spec.url}/bench/go/${namespace}`, { method: 'POST' }).then(() => {
        ticking = true;
        tick(now());
      });
    }
  });
  informer.on('update', (obj) => {
    received[Number(obj.metadata.resourceVersion) - spec.first_rv] = now();
    seen += 1;
    if (seen === spec.events) {
      ticking = false;
      finish({ received, max_stall: maxStall });
    }
  });
  await informer.start();
} else {
  console.error(`unknown mode ${spec.mode}`);
  process.exit(2);
}
