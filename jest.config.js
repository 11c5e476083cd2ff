/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/gateway", "<rootDir>/simulator", "<rootDir>/infra", "<rootDir>/stacks", "<rootDir>/deployments", "<rootDir>/docs", "<rootDir>/local"],
  testMatch: ["**/*.test.ts"],
  // Floods hold tens of thousands of sockets for minutes: `npm run test:flood` (CI runs it after npm test).
  testPathIgnorePatterns: ["/node_modules/", "\\.flood\\.test\\.ts$"],
  // structuredClone in the suite's own realm (see the file), as it is outside jest.
  setupFiles: ["<rootDir>/infra/platform/jest-realm.ts"],
  transform: {
    "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.json" }],
  },
  // Servers on loopback need a little more than the default 5 s on a loaded 2-core machine.
  testTimeout: 30000,
  // Two cores: keep the parallelism modest so loopback timing stays sane.
  maxWorkers: 2,
};
