// Lets a child process run the TypeScript sources directly (node -r ./test/support/ts-register.js src/main.ts),
// so process-level tests need no build step. Transpile only: `npm test` type-checks separately.
const ts = require('typescript');
const { readFileSync } = require('node:fs');

require.extensions['.ts'] = function compile(module, filename) {
  const { outputText } = ts.transpileModule(readFileSync(filename, 'utf8'), {
    fileName: filename,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      esModuleInterop: true,
      sourceMap: false,
    },
  });
  module._compile(outputText, filename);
};
