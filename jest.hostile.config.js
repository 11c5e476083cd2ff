/** @type {import('jest').Config} The hostile-client suite alone (`npm run test:hostile`), floods included. */
const base = require("./jest.config.js");
module.exports = {
  ...base,
  roots: ["<rootDir>/gateway/test/hostile"],
  testPathIgnorePatterns: [],
  // Attacks hold thousands of sockets: one file at a time.
  maxWorkers: 1,
  testTimeout: 120000,
};
