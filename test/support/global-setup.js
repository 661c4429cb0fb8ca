// Placeholder until the end-to-end harness lands: nothing global is needed by unit tests.
module.exports = async () => {};
