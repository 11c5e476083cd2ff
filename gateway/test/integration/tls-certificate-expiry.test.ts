// GATEWAY_TLS_CERT_FILE: the gateway exports the expiry of a certificate made by openssl, follows the file as a
// mounted Secret changes, and drops the gauge (without stopping) when the file is not a certificate.
import { execFileSync } from "node:child_process";
import { mkdtempSync, renameSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { startHarness, waitFor, type Harness } from "../support/harness";

const METRIC = "gateway_tls_certificate_expiry_timestamp_seconds";
const dir = mkdtempSync(path.join(tmpdir(), "gateway-tls-"));
const certFile = path.join(dir, "tls.crt");

/** A self-signed certificate valid for `days`, as PEM, and its notAfter (seconds) as openssl reports it. */
function certificate(days: number): { pem: string; notAfter: number } {
  const out = path.join(dir, `cert-${days}.pem`);
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", path.join(dir, "key.pem"), "-out", out, "-days", String(days), "-subj", "/CN=llm.example.com"], { stdio: "ignore" });
  const enddate = execFileSync("openssl", ["x509", "-enddate", "-noout", "-in", out], { encoding: "utf8" });
  return { pem: readFileSync(out, "utf8"), notAfter: Date.parse(enddate.replace(/^notAfter=/, "").trim()) / 1000 };
}

/** As the kubelet updates a Secret volume: the new content appears at once, never half written. */
function replace(text: string): void {
  writeFileSync(`${certFile}.new`, text);
  renameSync(`${certFile}.new`, certFile);
}

describe("the provided TLS certificate's expiry", () => {
  const leaf = certificate(30);
  const intermediate = certificate(400);
  let h: Harness;
  const gauge = async () => {
    const text = await (await fetch(h.gateway.metricsUrl)).text();
    const line = text.match(new RegExp(`^${METRIC} (\\S+)$`, "m"));
    return line ? Number(line[1]) : undefined;
  };
  const warnings = () => h.logs.filter((l) => String(l.msg).startsWith("TLS certificate unreadable")).length;

  beforeAll(async () => {
    // A chain as a Secret's tls.crt holds it: the leaf first.
    replace(leaf.pem + intermediate.pem);
    h = await startHarness([{ id: "m" }], { settings: { tlsCertFile: certFile }, tlsCertRereadMs: 50 });
  });
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is the leaf's notAfter, from the start", async () => {
    expect(leaf.notAfter).not.toBe(intermediate.notAfter);
    expect(await gauge()).toBe(leaf.notAfter);
  });

  it("follows the file when it is replaced, within a re-read", async () => {
    const renewed = certificate(90);
    replace(renewed.pem);
    await waitFor(async () => (await gauge()) === renewed.notAfter, 5000, "the renewed certificate's expiry");
  });

  it("is absent while the file is not a certificate, warned once; the gateway keeps serving, and the gauge returns", async () => {
    replace("not a certificate\n");
    await waitFor(async () => (await gauge()) === undefined, 5000, "the gauge to go");
    // Several re-reads of the same bad file: still one warning.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(warnings()).toBe(1);
    expect((await fetch(`${h.gateway.opsUrl}/readyz`)).status).toBe(200);
    expect((await h.fetch("/v1/models")).status).toBe(200);
    rmSync(certFile);
    await waitFor(() => warnings() === 2, 5000, "the missing file warned");
    replace(leaf.pem);
    await waitFor(async () => (await gauge()) === leaf.notAfter, 5000, "the gauge back");
  });
});
