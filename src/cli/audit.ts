import { openRuntime, Runtime } from '../app/runtime';
import { Actor, RecordedEvent } from '../shared/domain/event';
import { VersionedReadModels } from '../shared/application/projection-runtime/versioned-read-models';
import { AUDIT_INDEX_CHECKPOINT, AuditPageRequest, AuditSubject, EntityHistory } from '../modules/audit/entity-history';
import { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX, parseAuditPage, presentAuditEvent } from '../modules/audit/audit-trail';
import { DomainError } from '../shared/domain/errors';
import { CliIo, cliConfig, EXIT_FAILED, EXIT_OK, parseCommandLine, reportFailure, runAsMain, UsageError } from './cli-io';

export const AUDIT_USAGE = `Usage: npm run audit -- <instance> <user|room> <id> [--json]
       npm run audit -- <instance> actor <user_id|key:<key_id>> [--from <position>] [--limit <n>] [--json]
       npm run audit -- <instance> publish <publishId> [--json]
       npm run audit -- <instance> roles [--json]
       npm run audit -- instance <instance_id> [--json]

A user's history includes the roles granted to and taken from it and its Beams deletions;
a room's, its timeline (sends), its messages' edits and deletes, its attachments and the
role grants scoped to it; "actor" lists everything one user or key did (key:<key_id> for a
key, user:<id> for a user id that starts with "key:"), ${AUDIT_PAGE_DEFAULT} events a page (--limit up to
${AUDIT_PAGE_MAX}; --from the position the previous page ends with, printed as "more: --from ...");
"publish" is one Beams publish (who, when, targets, payload); "roles" is the instance's
roles and their permissions. Prints the history oldest first, in log order: revision, event type, when it
was recorded, who acted (the user and the key of the token, or cli/bootstrap) and the data.
--json prints one JSON object per line instead. Key secrets appear sealed, as they are logged.`;

interface Target {
  readonly subject: AuditSubject;
  readonly description: string;
}

interface Parsed {
  readonly target: Target;
  readonly json: boolean;
  readonly from: string | null;
  readonly limit: number;
}

/** --from and --limit, checked as the audit API checks `from` and `limit` (one parser for both). */
function parsePage(from: string | undefined, limit: string | undefined): AuditPageRequest {
  try {
    return parseAuditPage({ from, limit });
  } catch (error) {
    throw new UsageError(`--${error instanceof DomainError ? error.description : String(error)}`);
  }
}

export function parseTarget(argv: readonly string[]): Parsed | null {
  const parsed = parseCommandLine({
    args: [...argv],
    options: {
      json: { type: 'boolean' },
      from: { type: 'string' },
      limit: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
  });
  const { positionals: p, values } = parsed;
  if (values.help || (p.length === 1 && p[0] === 'help')) return null;
  const page = parsePage(values.from, values.limit);
  const common = { json: values.json === true, from: page.from ?? null, limit: page.limit };
  const actorView = p.length === 3 && p[1] === 'actor';
  if (!actorView && (values.from !== undefined || values.limit !== undefined)) throw new UsageError('--from and --limit page the actor view only');
  if (p.length === 2 && p[0] === 'instance') {
    return { target: { subject: { kind: 'instance', instanceId: p[1] }, description: `the instance "${p[1]}"` }, ...common };
  }
  if (p.length === 2 && p[1] === 'roles') {
    return { target: { subject: { kind: 'roles', instanceId: p[0] }, description: `the roles of instance "${p[0]}"` }, ...common };
  }
  if (p.length === 3) {
    const [instanceId, kind, id] = p;
    const named = { user: 'the user', room: 'the room', publish: 'the Beams publish', actor: 'the actor' } as const;
    if (kind === 'user' || kind === 'room' || kind === 'publish' || kind === 'actor') {
      return { target: { subject: { kind, instanceId, id }, description: `${named[kind]} "${id}" of instance "${instanceId}"` }, ...common };
    }
    throw new UsageError(`the entity kind must be "user", "room", "actor" or "publish", not "${kind}"`);
  }
  throw new UsageError(p.length === 0 ? 'say which entity to audit' : 'wrong number of arguments');
}

export const describeActor = (actor: Actor | undefined): string => {
  if (!actor || (actor.key_id === undefined && actor.user_id === undefined)) return 'unknown';
  const parts: string[] = [];
  if (actor.user_id !== undefined) parts.push(`user "${actor.user_id}"`);
  if (actor.key_id !== undefined) parts.push(`key "${actor.key_id}"`);
  return parts.join(' with ') + (actor.su ? ' (su)' : '');
};

const indent = (text: string, by: string) =>
  text
    .split('\n')
    .map((l) => by + l)
    .join('\n');

function printBlock(io: CliIo, event: RecordedEvent): void {
  io.out(`#${event.revision} ${event.type}`);
  io.out(`  recorded at: ${event.recordedAt}`);
  io.out(`  actor:       ${describeActor(event.metadata?.actor)}`);
  // The HTTP request that appended it: the same id is in that request's access-log line.
  if (typeof event.metadata?.request_id === 'string') io.out(`  request:     ${event.metadata.request_id}`);
  io.out(`  position:    ${event.position}`);
  io.out('  data:');
  io.out(indent(JSON.stringify(event.data, null, 2), '    '));
  io.out('');
}

const jsonLine = (event: RecordedEvent) => JSON.stringify(presentAuditEvent(event));

/** The audit CLI: an instance's, user's, room's or actor's history, read from the log. */
export async function run(argv: readonly string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  let runtime: Runtime | undefined;
  try {
    const parsed = parseTarget(argv);
    if (!parsed) {
      io.out(AUDIT_USAGE);
      return EXIT_OK;
    }
    const { target, json } = parsed;
    // 'separate': reading the log and the index needs no projector and takes no lease.
    runtime = await openRuntime(cliConfig(env), 'separate');
    const history = new EntityHistory(runtime.stores.events, new VersionedReadModels(runtime.stores.readModels, runtime.versions));
    const whole = target.subject.kind !== 'actor';
    const page = await history.page(target.subject, whole ? { limit: Number.MAX_SAFE_INTEGER } : parsed);
    if (target.subject.kind === 'actor' || target.subject.kind === 'room') await warnIfIndexBehind(runtime, io);
    const named = page.sources.length === 1 ? `Stream ${page.sources[0]}` : `Streams ${page.sources.join(', ')}`;
    if (page.events.length === 0) {
      if (parsed.from) {
        if (!json) io.out('no events after that position');
        return EXIT_OK;
      }
      io.err(`no events: ${target.description} has no history (${named.toLowerCase()})`);
      return EXIT_FAILED;
    }
    if (!json) io.out(`${named}\n`);
    for (const event of page.events) {
      if (json) io.out(jsonLine(event));
      else printBlock(io, event);
    }
    const count = page.events.length;
    if (!json) io.out(`${count} event${count === 1 ? '' : 's'}`);
    if (page.next !== null) {
      const more = `more: --from ${page.next}`;
      if (json) io.err(more);
      else io.out(more);
    }
    return EXIT_OK;
  } catch (error) {
    return reportFailure(error, io, AUDIT_USAGE);
  } finally {
    await runtime?.close().catch(() => undefined);
  }
}

/** The index is folded by the projector: from the CLI it may trail the log (a server stopped mid-way). */
async function warnIfIndexBehind(runtime: Runtime, io: CliIo): Promise<void> {
  const [indexed, head] = await Promise.all([runtime.stores.readModels.getCheckpoint(AUDIT_INDEX_CHECKPOINT), runtime.stores.events.headPosition()]);
  if (head !== null && (indexed === null || indexed < head)) {
    io.err(`note: the audit index has folded the log up to ${indexed ?? 'nothing'}, the log ends at ${head}; events after it are not listed until a projector runs`);
  }
}

if (require.main === module) runAsMain(run);
