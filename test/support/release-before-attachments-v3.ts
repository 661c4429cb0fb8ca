import 'reflect-metadata';
import { runUntilSignalled } from '../../src/app/process';
import { startEmbedded } from '../../src/app/entry-points';
import { ALL_PROJECTIONS } from '../../projections';
import type { ProjectionDefinition } from '../../projections/projection';

/**
 * Parley as the release before attachments_v3: every projection this release lists, without
 * attachments' version 3 (it folds version 2 alone). What an operator upgrades from; built to
 * dist/test/support/release-before-attachments-v3.js and run as the embedded server.
 */
export const PROJECTIONS_BEFORE: readonly ProjectionDefinition[] = ALL_PROJECTIONS.filter((p) => !(p.name === 'attachments' && p.version >= 3));

runUntilSignalled(() => startEmbedded(PROJECTIONS_BEFORE));
