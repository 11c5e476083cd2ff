// `npm run docs:config`: writes docs/configuration.md from the configuration schemas (see stacks/config-reference.ts).
import * as fs from "fs";
import * as path from "path";
import { configurationReference } from "../stacks/config-reference";

export const CONFIGURATION_PAGE = path.resolve(__dirname, "..", "docs", "configuration.md");

if (require.main === module) {
  fs.writeFileSync(CONFIGURATION_PAGE, configurationReference());
  console.log(`wrote ${path.relative(process.cwd(), CONFIGURATION_PAGE)}`);
}
