import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnGateway, spawnSimulator, stopAll } from "/work/main/bench/lib/processes";
import { Pool } from "undici";
async function main() {
  const sim = await spawnSimulator(["--model","m","--port","0","--ttft-ms","0","--itl-ms","0","--prefill-time-per-token-ms","0","--max-num-seqs","4096","--no-prefix-cache"]);
  const dir = mkdtempSync(join(tmpdir(), "p-")); const cat = join(dir,"c.json");
  writeFileSync(cat, JSON.stringify({models:[{id:"m",category:"generative",maxConcurrency:4096,upstream:{mode:"endpoints",endpoints:[{url:sim.url}]}}]}));
  const gw = await spawnGateway({GATEWAY_CATALOG:cat,GATEWAY_API_KEY:"sk-bench-0123456789abcdefghijklmnop",LOG_LEVEL:"info",NODE_OPTIONS:"--cpu-prof --cpu-prof-dir=/tmp/cpuprof"});
  const pool = new Pool(gw.url,{connections:16});
  const body = JSON.stringify({model:"m",messages:[{role:"user",content:"hello there"}],max_tokens:16});
  const end = Date.now()+5000; let n=0;
  await Promise.all(Array.from({length:16}, async()=>{ while(Date.now()<end){ const r=await pool.request({path:"/v1/chat/completions",method:"POST",headers:{authorization:"Bearer sk-bench-0123456789abcdefghijklmnop","content-type":"application/json"},body}); await r.body.dump(); n++; } }));
  console.log("rps", n/5);
  await pool.close(); await stopAll([gw.proc, sim.proc]);
}
main();
