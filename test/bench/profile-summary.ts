/**
 * Summarises a V8 .cpuprofile (from `BENCH_CPU_PROF=<dir> npm run bench`, or `CPU_PROF=<dir>`
 * with cpu-per-op.js):
 *   node dist/test/bench/profile-summary.js <file.cpuprofile> [top=30]
 * Prints self time by function and by package/source area, and inclusive time of Parley's own
 * functions, so the top costs can be read without DevTools.
 *
 * Two profiles of the same work (e.g. an older release's server and this one's, each doing the
 * same number of requests) compared, function by function, largest differences first:
 *   node dist/test/bench/profile-summary.js --diff <before.cpuprofile> <after.cpuprofile> [operations=1] [top=40]
 * Times are in µs per operation (divided by `operations`); idle time is left out. A profile
 * slows what it samples, and more the longer a process runs: compare profiles of runs of
 * about the same length, and take the figures of cpu-per-op.js without profiling as the cost.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

interface Summary {
  /** µs sampled, idle included. */
  total: number;
  /** µs sampled, idle left out. */
  busy: number;
  selfByFn: Map<string, number>;
  selfByArea: Map<string, number>;
  /** Every function's time with what it calls (each counted once per sample). */
  inclusiveByFn: Map<string, number>;
}

const shortUrl = (url: string): string =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, 'node_modules/')
    .replace(/^.*\/dist\//, 'dist/');
const area = (url: string): string => {
  if (!url) return '(native / V8 / GC)';
  if (url.startsWith('node:')) return 'node core';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  const d = /\/dist\/([^/]+\/[^/]+)/.exec(url);
  return d ? `parley ${d[1]}` : shortUrl(url);
};
const label = (n: ProfileNode): string =>
  `${n.callFrame.functionName || '(anonymous)'} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);

function summarise(file: string): Summary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Time per sample: the delta that follows it.
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
  });
  const summary: Summary = { total: 0, busy: 0, selfByFn: new Map(), selfByArea: new Map(), inclusiveByFn: new Map() };
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    summary.total += us;
    const idle = node.callFrame.functionName === '(idle)';
    if (!idle) summary.busy += us;
    add(summary.selfByFn, label(node), us);
    add(summary.selfByArea, idle ? '(idle)' : area(node.callFrame.url), us);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const l = label(byId.get(cur)!);
      if (!seen.has(l)) {
        seen.add(l);
        add(summary.inclusiveByFn, l, us);
      }
    }
  }
  return summary;
}

function printOne(file: string, top: number): void {
  const { total, selfByFn, selfByArea, inclusiveByFn } = summarise(file);
  const inclusiveParley = new Map([...inclusiveByFn].filter(([l]) => /dist\/(src|projections)\//.test(l)));
  const print = (title: string, m: Map<string, number>, n: number) => {
    console.log(`\n${title}`);
    for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) {
      console.log(`${((us / total) * 100).toFixed(1).padStart(6)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
    }
  };
  console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`);
  print('self time by area', selfByArea, 20);
  print('self time by function', selfByFn, top);
  print("inclusive time of Parley's own functions", inclusiveParley, top);
}

function printDiff(before: string, after: string, operations: number, top: number): void {
  const a = summarise(before);
  const b = summarise(after);
  const per = (us: number) => (us / operations).toFixed(1).padStart(8);
  console.log(`busy (idle left out), µs per operation: before ${per(a.busy)}, after ${per(b.busy)}`);
  const diff = (title: string, x: Map<string, number>, y: Map<string, number>) => {
    console.log(`\n${title}: before, after, difference (µs per operation)`);
    const idle = (k: string) => k.startsWith('(idle)') || k.startsWith('(root)');
    const rows = [...new Set([...x.keys(), ...y.keys()])].filter((k) => !idle(k)).map((k) => [k, x.get(k) ?? 0, y.get(k) ?? 0] as const);
    for (const [k, u, v] of rows.sort((p, q) => Math.abs(q[2] - q[1]) - Math.abs(p[2] - p[1])).slice(0, top)) console.log(`${per(u)} ${per(v)} ${per(v - u)}  ${k}`);
  };
  diff('self time by area', a.selfByArea, b.selfByArea);
  diff('self time by function', a.selfByFn, b.selfByFn);
  diff('inclusive time by function', a.inclusiveByFn, b.inclusiveByFn);
}

const args = process.argv.slice(2);
if (args[0] === '--diff' && args[1] && args[2]) {
  printDiff(args[1], args[2], Number(args[3] ?? 1), Number(args[4] ?? 40));
} else if (args[0] && args[0] !== '--diff' && !Number.isNaN(Number(args[1] ?? 30))) {
  printOne(args[0], Number(args[1] ?? 30));
} else {
  console.error('usage: node dist/test/bench/profile-summary.js <file.cpuprofile> [top]\n       node dist/test/bench/profile-summary.js --diff <before.cpuprofile> <after.cpuprofile> [operations] [top]');
  process.exit(2);
}
