import 'reflect-metadata';
import { runUntilSignalled } from '../../src/app/process';
import { startApi, startEmbedded, startProjectorWorker } from '../../src/app/entry-points';
import { ALL_PROJECTIONS } from '../../projections';
import type { ProjectionDefinition } from '../../projections/projection';

/**
 * Parley as the next release would be if it bumped the users projection's version, listing the
 * old one beside it as README's "Changing a projection" says: what an operator upgrades to.
 * Built to dist/test/support/upgraded-release.js; run as one of Parley's processes:
 * `node dist/test/support/upgraded-release.js embedded|api|projector`.
 */
export const UPGRADED_PROJECTIONS: readonly ProjectionDefinition[] = ALL_PROJECTIONS.flatMap((definition) =>
  definition.name === 'users' ? [definition, { ...definition, version: definition.version + 1 }] : [definition],
);

const entries = { embedded: startEmbedded, api: startApi, projector: startProjectorWorker };
const which = process.argv[2] as keyof typeof entries;
if (!(which in entries)) {
  console.error(`usage: upgraded-release.js ${Object.keys(entries).join('|')}`);
  process.exit(2);
}
runUntilSignalled(() => entries[which](UPGRADED_PROJECTIONS));
