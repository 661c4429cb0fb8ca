import 'reflect-metadata';
import { runUntilSignalled } from './app/process';
import { startApi } from './app/entry-points';

/** Production API process: serves requests; projector workers (main.projector) fold the log. */
runUntilSignalled(() => startApi());
