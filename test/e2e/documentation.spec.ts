import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { parseInvocation as parseAdmin } from '../../src/cli/admin';
import { parseTarget as parseAudit } from '../../src/cli/audit';
import { parse as parseExport } from '../../src/cli/export';
import { parse as parseImport } from '../../src/cli/import';
import { chooseProjections as parseRebuild } from '../../src/cli/rebuild';

/**
 * The README and docs/ are what operators and newcomers act on, so whatever they name must be
 * there: `npm run` scripts, CLI commands and options (as the CLIs' own parsers take them),
 * environment variables, repository files, and the sections their links point to. Every
 * variable src/config/config.ts reads must have its row in a configuration table.
 */
const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Text of a document with its fenced code blocks kept apart, for what prose and code each name. */
interface Doc {
  readonly file: string;
  readonly text: string;
  /** The text with fenced code blocks blanked (same offsets), so spans and links are found in prose only. */
  readonly prose: string;
  /** Code, as `[line, text]`: each line of a fenced block, and each inline code span (whitespace collapsed). */
  readonly code: readonly (readonly [number, string])[];
}

const lineAt = (text: string, offset: number) => text.slice(0, offset).split('\n').length;

function loadDoc(file: string): Doc {
  const text = read(file);
  const code: [number, string][] = [];
  let inFence = false;
  const proseLines = text.split('\n').map((line, i) => {
    if (/^\s*```/.test(line)) {
      inFence = !inFence;
      return ' '.repeat(line.length);
    }
    if (!inFence) return line;
    code.push([i + 1, line]);
    return ' '.repeat(line.length);
  });
  const prose = proseLines.join('\n');
  for (const m of prose.matchAll(/`([^`]+)`/g)) code.push([lineAt(text, m.index!), m[1].replace(/\s+/g, ' ').trim()]);
  return { file, text, prose, code };
}

const docs = DOCS.map(loadDoc);
const where = (doc: Doc, line: number) => `${doc.file}:${line}`;

/** Every file of the repository that is not built, installed or generated. */
function repositoryFiles(dir = ROOT): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (['node_modules', 'dist', '.git', 'data', 'coverage'].includes(name)) return [];
    const path = join(dir, name);
    return statSync(path).isDirectory() ? repositoryFiles(path) : [relative(ROOT, path)];
  });
}
const FILES = repositoryFiles();

describe('npm scripts the documentation names', () => {
  const scripts: Record<string, string> = JSON.parse(read('package.json')).scripts;

  it('are all in package.json', () => {
    const named: string[] = [];
    const missing: string[] = [];
    for (const doc of docs) {
      for (const m of doc.text.matchAll(/\bnpm\s+(?:run|run-script)\s+(?:--?[a-z][\w-]*\s+)*([a-z][\w:.-]*)|\bnpm\s+(start|test|stop|restart)\b/g)) {
        const script = m[1] ?? m[2];
        named.push(script);
        if (!(script in scripts)) missing.push(`${where(doc, lineAt(doc.text, m.index!))}: npm run ${script}`);
      }
    }
    expect(missing).toEqual([]);
    // The scan finds what is there: the README's quick start and the operations guide's commands.
    expect(named).toEqual(expect.arrayContaining(['build', 'start:api', 'start:projector', 'admin', 'rebuild', 'audit', 'export', 'import', 'bench']));
  });
});

/** The parser of each CLI, as its `run` uses it before opening any store: it throws a UsageError on what the CLI refuses. */
const CLI_PARSERS: Record<string, (argv: readonly string[]) => unknown> = {
  admin: parseAdmin,
  audit: parseAudit,
  export: parseExport,
  import: parseImport,
  rebuild: parseRebuild,
};

/** What stands for a placeholder when a documented command line is handed to a parser. */
const SAMPLES: Record<string, string> = { n: '10', position: '42', projection: 'users' };

/**
 * The command lines a documented invocation stands for: `<placeholders>` filled in, and
 * `[optional parts]` both left out and all given. Null when it names the CLI alone, or a
 * `<command>` of it, rather than a command line.
 */
function commandLines(rest: string): string[][] | null {
  let args = rest.replace(/^\s*--(\s|$)/, '').trim();
  if (args === '' || args.startsWith('<command>')) return null;
  while (/<[^<>]*>/.test(args)) args = args.replace(/<([^<>]*)>/g, (_, name: string) => SAMPLES[name.trim()] ?? 'sample1');
  const words = (s: string) => s.replace(/(\.\.\.|…)(?=\s|$)/g, '').split(/\s+/).filter((w) => w !== '');
  const without = words(args.replace(/\[[^[\]]*\]/g, ' '));
  const all = words(args.replace(/\[([^[\]]*)\]/g, ' $1 '));
  return without.join(' ') === all.join(' ') ? [all] : [without, all];
}

describe('CLI commands the documentation names', () => {
  /** `npm run [--silent] <cli> -- <arguments>` in code, up to a comment or the next shell operator. */
  const invocations = docs.flatMap((doc) =>
    doc.code.flatMap(([line, code]) =>
      [...code.matchAll(/\bnpm\s+run\s+(?:--silent\s+)?(admin|audit|export|import|rebuild)\b((?:(?!\s#|&&|\|\||;|\s\|\s|\)$).)*)/g)].map((m) => ({
        at: where(doc, line),
        cli: m[1],
        rest: m[2],
      })),
    ),
  );

  it('are taken by the CLIs, with their arguments and options', () => {
    const checked = new Set<string>();
    const refused: string[] = [];
    for (const { at, cli, rest } of invocations) {
      for (const argv of commandLines(rest) ?? []) {
        try {
          CLI_PARSERS[cli](argv);
          checked.add(cli === 'admin' ? `admin ${argv[0]}` : cli);
        } catch (error) {
          refused.push(`${at}: npm run ${cli} -- ${argv.join(' ')}: ${(error as Error).message}`);
        }
      }
    }
    expect(refused).toEqual([]);
    // Every admin command and every CLI is documented with its arguments somewhere.
    expect([...checked].sort()).toEqual(
      expect.arrayContaining([
        'admin data-dir:seal',
        'admin instance:create',
        'admin instance:disable',
        'admin instance:enable',
        'admin instance:list',
        'admin key:create',
        'admin key:disable',
        'admin key:list',
        'admin token-provider:disable',
        'admin token-provider:enable',
        'admin user:erase',
        'audit',
        'export',
        'import',
        'rebuild',
      ]),
    );
  });

  it('is a check that refuses what the CLIs refuse', () => {
    const refused = (cli: string, rest: string) =>
      commandLines(rest)!.some((argv) => {
        try {
          CLI_PARSERS[cli](argv);
          return false;
        } catch {
          return true;
        }
      });
    expect(refused('admin', ' -- key:remove <instance> <key_id>')).toBe(true);
    expect(refused('admin', ' -- instance:create <id> [--region eu]')).toBe(true);
    expect(refused('audit', ' -- <instance> channel <id>')).toBe(true);
    expect(refused('rebuild', ' -- usrs')).toBe(true);
    expect(refused('admin', ' -- key:create <instance> [key_id] [--secret S]')).toBe(false);
    expect(refused('audit', ' -- <instance> actor <user_id|key:<key_id>> [--from <position>] [--limit <n>] [--json]')).toBe(false);
  });
});

/** Names that look like environment variables: upper case with an underscore (`DATA_DIR`), or a family (`RATE_LIMIT_*`). */
const VARIABLE = /(?<![\w-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w-])/g;
const VARIABLE_FAMILY = /(?<![\w-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_)\*/g;

/** The variables src/config/config.ts reads. */
function configVariables(): Set<string> {
  const source = read('src/config/config.ts');
  const names = new Set<string>();
  for (const m of source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g)) names.add(m[1]);
  for (const m of source.matchAll(/Variable\(\s*env\s*,\s*'([A-Z][A-Z0-9_]*)'/g)) names.add(m[1]);
  return names;
}

/**
 * Every variable something in the repository reads or sets: the code (process.env.X, env.X,
 * env['X'], or the name as a string literal), the compose file, .env.example, the Dockerfile,
 * package.json's scripts and the CI workflow. Node reads NODE_EXTRA_CA_CERTS itself, and the
 * test script sets it.
 */
function knownVariables(): Set<string> {
  const names = new Set<string>();
  const add = (text: string, pattern: RegExp) => {
    for (const m of text.matchAll(pattern)) names.add(m[1]);
  };
  const self = relative(ROOT, __filename);
  for (const file of FILES) {
    if (file === self || file.endsWith('.spec.ts') || !/^(src|projections|test|deploy)\/.*\.(ts|js|mjs)$/.test(file)) continue;
    const text = read(file);
    add(text, /\benv(?:\.|\[\s*['"])([A-Z][A-Z0-9_]*)/g);
    add(text, /['"]([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)['"]/g);
  }
  for (const file of ['docker-compose.yml', '.github/workflows/ci.yml']) {
    const text = read(file);
    add(text, /\$\{([A-Z][A-Z0-9_]*)/g);
    add(text, /^\s+([A-Z][A-Z0-9_]*):/gm);
    add(text, /\b([A-Z][A-Z0-9_]*)=/g);
  }
  add(read('.env.example'), /^#?\s*([A-Z][A-Z0-9_]*)=/gm);
  add(read('Dockerfile'), /\b([A-Z][A-Z0-9_]*)=/g);
  add(Object.values<string>(JSON.parse(read('package.json')).scripts).join('\n'), /\b([A-Z][A-Z0-9_]*)=/g);
  return names;
}

/** The first-column names of every table headed `| Variable |`, with where each is. */
function tableVariables(): Map<string, string> {
  const found = new Map<string, string>();
  for (const doc of docs) {
    let inTable = false;
    doc.prose.split('\n').forEach((line, i) => {
      if (/^\|\s*Variable\s*\|/.test(line)) inTable = true;
      else if (!line.startsWith('|')) inTable = false;
      else if (inTable) for (const m of (/^\|([^|]+)\|/.exec(line)?.[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)) found.set(m[1], where(doc, i + 1));
    });
  }
  return found;
}

describe('environment variables', () => {
  const config = configVariables();
  const known = knownVariables();
  const tables = tableVariables();

  it('that the documentation names are read or set by something in the repository', () => {
    let count = 0;
    const unknown: string[] = [];
    for (const doc of docs) {
      for (const [line, code] of doc.code) {
        for (const m of code.matchAll(VARIABLE)) {
          count++;
          if (!known.has(m[1])) unknown.push(`${where(doc, line)}: ${m[1]}`);
        }
        for (const m of code.matchAll(VARIABLE_FAMILY)) {
          if (![...known].some((name) => name.startsWith(m[1]))) unknown.push(`${where(doc, line)}: ${m[1]}*`);
        }
      }
    }
    expect(unknown).toEqual([]);
    expect(count).toBeGreaterThan(50);
  });

  it('in a configuration table are the ones src/config/config.ts reads, every one of them', () => {
    expect(config.size).toBeGreaterThan(40);
    const notRead = [...tables].filter(([variable]) => !config.has(variable)).map(([variable, at]) => `${at}: ${variable}`);
    expect(notRead).toEqual([]);
    const undocumented = [...config].filter((variable) => !tables.has(variable));
    expect(undocumented).toEqual([]);
  });
});

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2… */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    const heading = !inFence && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

describe('links between the README and docs/', () => {
  it('lead to files that exist and to headings that are there', () => {
    let count = 0;
    const broken: string[] = [];
    for (const doc of docs) {
      for (const m of doc.prose.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^[a-z]+:/i.test(target)) continue; // http(s):, mailto:
        count++;
        const [path, anchor] = target.split('#');
        const file = path === '' ? doc.file : relative(ROOT, join(ROOT, dirname(doc.file), path));
        const at = where(doc, lineAt(doc.text, m.index!));
        if (!existsSync(join(ROOT, file))) broken.push(`${at}: ${target} (no such file)`);
        else if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(read(file)).has(anchor)) broken.push(`${at}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
    expect(count).toBeGreaterThan(30);
  });

  it('are found from the README to every document in docs/', () => {
    const readme = docs[0];
    const linked = new Set([...readme.prose.matchAll(/\]\((docs\/[^)#\s]+)/g)].map((m) => m[1]));
    expect(DOCS.slice(1).filter((doc) => !linked.has(doc))).toEqual([]);
  });

  it('are checked against GitHub anchors as GitHub makes them', () => {
    expect([...anchorsOf('# Health: readiness and liveness\n## Export, import, and moving from SQLite to EventStoreDB + MongoDB\n## A `code` heading\n## A\n## A')]).toEqual([
      'health-readiness-and-liveness',
      'export-import-and-moving-from-sqlite-to-eventstoredb--mongodb',
      'a-code-heading',
      'a',
      'a-1',
    ]);
  });
});

describe('repository files the documentation names', () => {
  const TOP = /^(?:\.\/)?((?:src|projections|test|deploy|docs|\.github)\/[\w./-]*|Dockerfile|docker-compose\.yml|package(?:-lock)?\.json|\.env\.example|\.dependency-cruiser\.js|\.dockerignore|CHANGELOG\.md|LICENSE|jest\.config\.js|tsconfig(?:\.\w+)?\.json)$/;
  const names = new Set(FILES.map((f) => basename(f)));
  // What the tests or the build write (git-ignored folders such as test/.screenshots/) exists only after they ran.
  const ignoredFolders = readFileSync(join(ROOT, '.gitignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.endsWith('/') && !line.startsWith('#'));
  const written = (path: string) => ignoredFolders.some((folder) => path.startsWith(folder));

  it('exist, by path or (for a bare source file name) somewhere in the tree', () => {
    let count = 0;
    const missing: string[] = [];
    for (const doc of docs) {
      for (const [line, code] of doc.code) {
        const path = TOP.exec(code)?.[1];
        const bare = /^[\w.-]+\.(ts|js|mjs)$/.test(code);
        if (path !== undefined || bare) count++;
        if (path !== undefined ? !written(path) && !existsSync(join(ROOT, path)) : bare && !names.has(code)) missing.push(`${where(doc, line)}: ${code}`);
      }
    }
    expect(missing).toEqual([]);
    expect(count).toBeGreaterThan(40);
  });
});
