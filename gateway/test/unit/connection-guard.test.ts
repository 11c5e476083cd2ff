import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clientAddress } from "../../src/http/connection-guard";
import { clampToFileLimit, openFileLimit } from "../../src/http/transport";

describe("client address", () => {
  it.each([
    ["127.0.0.2", "127.0.0.2"],
    ["::ffff:10.1.2.3", "10.1.2.3"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
    ["2001:db8:1:2::9", "2001:db8:1:2::/64"],
    ["2001:0db8:0001:0002:aaaa::1", "2001:db8:1:2::/64"],
    ["::1", "0:0:0:0::/64"],
    [undefined, "unknown"],
  ])("%s counts as %s", (remote, address) => {
    expect(clientAddress(remote)).toBe(address);
  });
});

describe("open-file limit", () => {
  it("reads the soft limit from /proc/self/limits and keeps a quarter free", () => {
    const dir = mkdtempSync(join(tmpdir(), "limits-"));
    const file = join(dir, "limits");
    writeFileSync(file, "Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 524288               files\n");
    expect(openFileLimit(file)).toBe(1024);
    expect(clampToFileLimit(8192, 1024)).toBe(768);
    expect(clampToFileLimit(8192, 1_048_576)).toBe(8192);
    expect(clampToFileLimit(8192, undefined)).toBe(8192);
    expect(openFileLimit(join(dir, "missing"))).toBeUndefined();
  });
});
