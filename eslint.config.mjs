import js from "@eslint/js";
import tseslint from "typescript-eslint";
import boundaries from "eslint-plugin-boundaries";

/**
 * The gateway's floors, ground first (docs/architecture.md, "The gateway's floors"): a folder of gateway/src
 * imports only folders on the floors below its own, never one on its own floor or above, so no two folders import
 * each other and no chain of them closes a loop. Type-only imports count too. Everything else in gateway/src
 * (app.ts, server.ts, cli/) is the composition root above them all.
 */
const GATEWAY_FLOORS = [
  ["api", "context"],
  ["config"],
  ["observability"],
  ["auth", "limits", "ledger"],
  ["http"],
  ["upstream"],
  ["endpoints"],
  ["relay"],
  ["responses"],
  ["routes"],
];

const gatewayFolders = GATEWAY_FLOORS.flat();
const gatewayLayers = {
  files: ["gateway/src/**/*.ts"],
  plugins: { boundaries },
  settings: {
    // First match wins: a file of a floor's folder is that folder; any other file of gateway/src is the root.
    "boundaries/elements": [
      ...gatewayFolders.map((folder) => ({ type: folder, pattern: `gateway/src/${folder}`, partialMatch: false })),
      { type: "composition-root", pattern: "gateway/src", partialMatch: false },
    ],
    "import/resolver": { node: { extensions: [".ts"] } },
  },
  rules: {
    "boundaries/dependencies": [
      "error",
      {
        default: "disallow",
        // An import of a file outside gateway/src (simulator/, infra/) is refused too.
        checkUnknownLocals: true,
        policies: [
          ...GATEWAY_FLOORS.flatMap((floor, level) =>
            floor.map((folder) => ({
              from: { element: { type: folder } },
              allow: { to: { element: { types: { anyOf: GATEWAY_FLOORS.slice(0, level).flat() } } } },
            })),
          ),
          { from: { element: { type: "composition-root" } }, allow: { to: { element: { types: { anyOf: gatewayFolders } } } } },
        ],
      },
    ],
  },
};

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", "**/dist/", "charts/", "coverage/", "*.js", "*.mjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  gatewayLayers,
);
