/**
 * Summarises a V8 .cpuprofile (from `BENCH_CPU_PROF=<dir> npm run bench`):
 *   node dist/test/bench/profile-summary.js <file.cpuprofile> [top=30]
 * Prints self time by function and by package/source area, and inclusive time of Parley's own
 * functions, so the top costs can be read without DevTools.
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

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node dist/test/bench/profile-summary.js <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(topArg ?? 30);
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
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const shortUrl = (url: string): string =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, 'node_modules/')
    .replace(/^.*\/dist\//, 'dist/');
const area = (url: string): string => {
  if (!url) return '(native / V8 / GC / idle)';
  if (url.startsWith('node:')) return 'node core';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  const d = /\/dist\/([^/]+\/[^/]+)/.exec(url);
  return d ? `parley ${d[1]}` : shortUrl(url);
};
const label = (n: ProfileNode): string =>
  `${n.callFrame.functionName || '(anonymous)'} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;

const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const selfByFn = new Map<string, number>();
const selfByArea = new Map<string, number>();
const inclusiveParley = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id)!;
  add(selfByFn, label(node), us);
  add(selfByArea, area(node.callFrame.url), us);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur)!;
    if (/\/dist\/(src|projections)\//.test(n.callFrame.url)) {
      const l = label(n);
      if (!seen.has(l)) {
        seen.add(l);
        add(inclusiveParley, l, us);
      }
    }
  }
}

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
