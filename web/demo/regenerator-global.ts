/**
 * `@pusher/chatkit-client` bundles regenerator-runtime, which publishes itself as the global
 * `regeneratorRuntime`: a plain assignment, which strict code may only make to a global that
 * exists, with `Function("r", "regeneratorRuntime = r")` as its fallback, which the page's
 * Content-Security-Policy (no `unsafe-eval`) refuses with an error. Declaring the global before
 * the SDK loads lets the assignment succeed. Imported first, ahead of the SDK.
 */
if (!('regeneratorRuntime' in globalThis)) Object.assign(globalThis, { regeneratorRuntime: undefined });
