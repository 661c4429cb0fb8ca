#!/usr/bin/env node
/**
 * Builds the browser pages Parley serves (`web/<page>/`, e.g. the console and the demo chat)
 * into `dist/web/<page>/`, as part of `npm run build`:
 *   node scripts/build-web.js [page …]      (default: every folder of web/ with a main.ts(x))
 * Each page is `web/<page>/index.html` (a template holding `<!-- parley:assets -->` where the
 * bundle's `<script>` and `<link>` go) and `web/<page>/main.ts(x)`, bundled by esbuild into
 * content-hashed files (served with a year-long immutable cache: a new build has new names) and
 * an `index.html` that names them (served `no-cache`). `dist/web/<page>/manifest.json` lists the
 * files with their sizes (raw and gzip), which are also printed.
 */
'use strict';
const { build } = require('esbuild');
const { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } = require('node:fs');
const { basename, join, resolve } = require('node:path');
const { gzipSync } = require('node:zlib');

const ROOT = resolve(__dirname, '..');
const WEB = join(ROOT, 'web');
const OUT = join(ROOT, 'dist', 'web');
const ASSETS_MARK = '<!-- parley:assets -->';

function entryOf(page) {
  for (const name of ['main.tsx', 'main.ts']) {
    const file = join(WEB, page, name);
    if (existsSync(file)) return file;
  }
  return undefined;
}

function pagesToBuild() {
  const asked = process.argv.slice(2);
  if (asked.length > 0) return asked;
  if (!existsSync(WEB)) return [];
  return readdirSync(WEB).filter((name) => statSync(join(WEB, name)).isDirectory() && entryOf(name) !== undefined);
}

async function buildPage(page) {
  const entry = entryOf(page);
  const template = join(WEB, page, 'index.html');
  if (!entry || !existsSync(template)) throw new Error(`web/${page} needs an index.html and a main.ts(x)`);
  const html = readFileSync(template, 'utf8');
  if (!html.includes(ASSETS_MARK)) throw new Error(`web/${page}/index.html has no ${ASSETS_MARK}`);
  const outdir = join(OUT, page);
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: { main: entry },
    bundle: true,
    minify: true,
    sourcemap: false,
    format: 'iife',
    target: ['es2020'],
    platform: 'browser',
    jsx: 'automatic',
    outdir,
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    loader: { '.svg': 'file', '.png': 'file', '.woff2': 'file' },
    define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
    metafile: true,
    logLevel: 'warning',
    absWorkingDir: ROOT,
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => basename(file));
  const tags = [
    ...outputs.filter((f) => f.endsWith('.css')).map((f) => `<link rel="stylesheet" href="${f}">`),
    ...outputs.filter((f) => f.endsWith('.js')).map((f) => `<script defer src="${f}"></script>`),
  ];
  writeFileSync(join(outdir, 'index.html'), html.replace(ASSETS_MARK, tags.join('\n    ')));
  const files = readdirSync(outdir).map((name) => {
    const bytes = readFileSync(join(outdir, name));
    return { name, bytes: bytes.length, gzip_bytes: gzipSync(bytes).length };
  });
  writeFileSync(join(outdir, 'manifest.json'), `${JSON.stringify({ page, files }, null, 2)}\n`);
  const total = files.reduce((sum, f) => sum + f.gzip_bytes, 0);
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
  console.log(`web/${page}: ${files.map((f) => `${f.name} ${kib(f.bytes)} (${kib(f.gzip_bytes)} gzip)`).join(', ')}; ${kib(total)} gzip in all`);
}

(async () => {
  for (const page of pagesToBuild()) await buildPage(page);
})().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
