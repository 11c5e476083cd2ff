import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, chmodSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../scripts/lib/processes";

export const NGINX_MISSING =
  "nginx not found: the plain reverse-proxy baseline is skipped. Install Debian's nginx to compare against it: `apt-get install nginx-light` (or `nginx`), then run again.";

/** Debian's nginx binary, if installed. */
export function nginxBinary(): string | undefined {
  return ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"].find((p) => existsSync(p));
}

export interface RunningNginx {
  url: string;
  proc: ChildProcess;
}

/**
 * nginx as a plain reverse proxy in front of `upstreams`, one worker, on loopback: keep-alive to the upstreams,
 * no buffering (SSE passes event by event), and one JSON access-log line per request (to /dev/null, as the
 * gateway's lines go), so both sides do the same per-request bookkeeping.
 */
export async function startNginx(binary: string, upstreams: readonly string[], prefix: readonly string[] = []): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), "bench-nginx-"));
  for (const d of ["body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, d));
  // Workers run as nobody when nginx is started by root: they must be able to use the temp directories.
  for (const d of ["", "body", "proxy", "fastcgi", "uwsgi", "scgi"]) chmodSync(join(dir, d), 0o777);
  const port = await freePort();
  const conf = `
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
worker_rlimit_nofile 16384;
events { worker_connections 8192; }
http {
  log_format json escape=json '{"time":"$time_iso8601","requestId":"$request_id","method":"$request_method","path":"$uri","status":$status,"latencyMs":$request_time,"replica":"$upstream_addr"}';
  access_log /dev/null json;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  client_body_buffer_size 1m;
  keepalive_requests 1000000;
  upstream models {
${upstreams.map((u) => `    server ${new URL(u).host};`).join("\n")}
    keepalive 256;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://models;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_read_timeout 600s;
    }
  }
}
`;
  const confFile = join(dir, "nginx.conf");
  writeFileSync(confFile, conf);
  const argv = [...prefix, binary, "-p", dir, "-c", confFile, "-e", join(dir, "error.log")];
  const proc = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "ignore", "inherit"] });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`nginx exited with ${proc.exitCode} (see ${dir}/error.log)`);
    try {
      await fetch(`${url}/health`);
      break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error("nginx did not start listening");
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, proc };
}
