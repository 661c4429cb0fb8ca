import { DomainError } from '../../domain/errors';
import { LogPosition } from '../../domain/event';
import { DecidedCommand } from './batch-decision';
import { AwaitedProjections, ReadYourWrites } from './read-your-writes';
import { savedUnconfirmed } from './write-errors';

/**
 * The projections a command's answer waits for: those it names, else those folding the event
 * types it appended; less those whose readers wait for them (`readersWait`) when this process
 * folds them (`ReadYourWrites.foldsHere`): the write is then left to those readers
 * (`leftToReaders`, readAfterWrites), before it is answered.
 */
function awaitedBy(readYourWrites: ReadYourWrites, decided: DecidedCommand, position: LogPosition): AwaitedProjections {
  const { awaitProjections, readersWait } = decided.item;
  if (!awaitProjections) return { folding: [...new Set(decided.events.map((e) => e.type))].sort() };
  if (!readersWait?.length || decided.events.length === 0 || !readYourWrites.foldsHere?.(readersWait) || !readYourWrites.leftToReaders) return awaitProjections;
  readYourWrites.leftToReaders(position, readersWait);
  return awaitProjections.filter((name) => !readersWait.includes(name));
}

const waitsForNothing = (awaited: AwaitedProjections): boolean =>
  Array.isArray(awaited) ? awaited.length === 0 : (awaited as { folding: readonly string[] }).folding.length === 0;

/**
 * Answers commands whose events were appended together, up to `position`, each once the read
 * models its answer depends on reflect the append (read-your-writes). Commands that wait for the
 * same projections share one wait; one that appended nothing (it changed nothing) waits for
 * nothing. The append succeeded: whatever fails while waiting, the answer says the change is saved.
 */
export function answerOnceProjected(readYourWrites: ReadYourWrites, decided: readonly DecidedCommand[], position: LogPosition): void {
  const byProjections = new Map<string, { awaited: AwaitedProjections; group: DecidedCommand[] }>();
  for (const d of decided) {
    const awaited = awaitedBy(readYourWrites, d, position);
    const key = JSON.stringify(awaited);
    const same = byProjections.get(key);
    if (same) same.group.push(d);
    else byProjections.set(key, { awaited, group: [d] });
  }
  for (const { awaited, group } of byProjections.values()) {
    const projected = waitsForNothing(awaited) ? Promise.resolve() : readYourWrites.waitFor(position, awaited);
    projected.then(
      () => {
        for (const d of group) d.item.resolve({ state: d.state, events: d.events, position: d.events.length ? position : null });
      },
      (error) => {
        const answer = error instanceof DomainError && error.reason === 'projection_lag' ? error : savedUnconfirmed(error);
        for (const d of group) d.item.reject(answer);
      },
    );
  }
}
