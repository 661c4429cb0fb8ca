#!/usr/bin/env node
'use strict';
/**
 * Container health checks, run with the process's own environment (Dockerfile HEALTHCHECK and
 * docker-compose.yml). Exit 0 when healthy, 1 otherwise, with one line saying why.
 *
 *   node deploy/healthcheck.js live        GET /health/live: the process runs (liveness)
 *   node deploy/healthcheck.js ready       GET /health: the API serves (readiness)
 *   node deploy/healthcheck.js projector   every projection is held by a live projector worker
 *
 * A projector worker has no HTTP listener; what makes it "able to serve" is that every
 * projection's lease is held and unexpired (a worker takes the leases when it starts and
 * renews them while it folds). The check reads the leases where the workers keep them: MongoDB
 * when MONGODB_URI is set, otherwise `<DATA_DIR>/read-models.sqlite` (and `search.sqlite` for
 * message search's). It needs the built code
 * (dist/) for the list of projections.
 */
const { join, resolve } = require('node:path');

const TIMEOUT_MS = 4000;

async function httpCheck(path) {
  const host = !process.env.HOST || process.env.HOST === '0.0.0.0' || process.env.HOST === '::' ? '127.0.0.1' : process.env.HOST;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${process.env.PORT || 8080}${path}`;
  const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  const body = await response.text();
  return { healthy: response.ok, detail: `${url} answered ${response.status} ${body.slice(0, 500)}` };
}

/**
 * The leases of every projection this build folds, and the SQLite file each lives in: one per
 * projection (`<name>_v<version>`), or one per partition (`…#k/N`) with PROJECTOR_PARTITIONS;
 * a projection folded apart (message search) keeps its lease in its own file.
 */
function projectionLeases() {
  const dist = join(__dirname, '..', 'dist');
  const { ALL_PROJECTIONS } = require(join(dist, 'projections', 'index.js'));
  const { projectionParts } = require(join(dist, 'src', 'shared', 'application', 'projection-runtime', 'projector', 'projection-parts.js'));
  const partitions = Number(process.env.PROJECTOR_PARTITIONS || 1);
  return projectionParts(ALL_PROJECTIONS, partitions).map(({ checkpoint, definition }) => ({
    name: checkpoint,
    sqliteFile: definition.background?.sqliteFile ? `${definition.background.sqliteFile}.sqlite` : 'read-models.sqlite',
  }));
}

/** Lease rows `{name, owner, expiresAt}` for the given leases (`{name, sqliteFile}`). */
async function readLeases(leases) {
  const names = leases.map((l) => l.name);
  if (process.env.MONGODB_URI) {
    const { MongoClient } = require('mongodb');
    const client = new MongoClient(process.env.MONGODB_URI, { serverSelectionTimeoutMS: TIMEOUT_MS, connectTimeoutMS: TIMEOUT_MS });
    try {
      const rows = await client
        .db(process.env.MONGODB_DATABASE || 'parley')
        .collection('leases')
        .find({ _id: { $in: names } })
        .toArray();
      return rows.map((r) => ({ name: r._id, owner: r.owner, expiresAt: r.expiresAt }));
    } finally {
      await client.close();
    }
  }
  const Database = require('better-sqlite3');
  const rows = [];
  for (const sqliteFile of new Set(leases.map((l) => l.sqliteFile))) {
    const inFile = leases.filter((l) => l.sqliteFile === sqliteFile).map((l) => l.name);
    const file = join(resolve(process.env.DATA_DIR || './data'), sqliteFile);
    let db;
    try {
      db = new Database(file, { readonly: true, fileMustExist: true, timeout: TIMEOUT_MS });
    } catch (error) {
      throw new Error(`${file}: ${error.message}`);
    }
    try {
      rows.push(
        ...db.prepare(`SELECT name, owner, expires_at AS expiresAt FROM leases WHERE name IN (${inFile.map(() => '?').join(', ')})`).all(...inFile),
      );
    } finally {
      db.close();
    }
  }
  return rows;
}

async function projectorCheck() {
  const leases = projectionLeases();
  const names = leases.map((l) => l.name);
  const now = Date.now();
  const held = new Map((await readLeases(leases)).filter((r) => r.expiresAt >= now).map((r) => [r.name, r.owner]));
  const missing = names.filter((n) => !held.has(n));
  return missing.length
    ? { healthy: false, detail: `no live projector worker holds ${missing.join(', ')}` }
    : { healthy: true, detail: `every projection is held (${[...new Set(held.values())].join(', ')})` };
}

const CHECKS = {
  live: () => httpCheck('/health/live'),
  ready: () => httpCheck('/health'),
  projector: projectorCheck,
};

const check = CHECKS[process.argv[2]];
if (!check) {
  console.error(`Usage: node deploy/healthcheck.js ${Object.keys(CHECKS).join('|')}`);
  process.exit(2);
}
check().then(
  ({ healthy, detail }) => {
    console.log(`${healthy ? 'healthy' : 'unhealthy'}: ${detail}`);
    process.exit(healthy ? 0 : 1);
  },
  (error) => {
    const cause = error && error.cause ? ` (${error.cause.code || error.cause.message})` : '';
    console.log(`unhealthy: ${error && error.message ? error.message : error}${cause}`);
    process.exit(1);
  },
);
