import 'reflect-metadata';
import { runUntilSignalled } from './app/process';
import { startEmbedded } from './app/entry-points';

/** The embedded default: the API and the projectors in one process (`npm start`). */
runUntilSignalled(() => startEmbedded());
