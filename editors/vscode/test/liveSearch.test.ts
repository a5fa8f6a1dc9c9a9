import { strict as assert } from "node:assert";
import { mock, test } from "node:test";

import { LiveSearch, Ticket } from "../src/liveSearch";

interface Sent {
  query: string;
  cancelled: boolean;
  resolve: (value: string) => void;
  reject: (error: unknown) => void;
}

function harness(delayMs = 200) {
  const sent: Sent[] = [];
  const shown: string[] = [];
  const errors: string[] = [];
  const busy: boolean[] = [];
  const live = new LiveSearch<string>({
    start: (query): Ticket<string> => {
      let resolve!: (value: string) => void;
      let reject!: (error: unknown) => void;
      const answer = new Promise<string>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      const entry: Sent = { query, cancelled: false, resolve, reject };
      sent.push(entry);
      return { answer, cancel: () => { entry.cancelled = true; reject(new Error("cancelled")); } };
    },
    onResult: (query, result) => shown.push(`${query} -> ${result}`),
    onError: (query) => errors.push(query),
    onBusy: (b) => busy.push(b),
    delayMs,
  });
  return { live, sent, shown, errors, busy };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test("typing a description sends one request once the text rests", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const { live, sent } = harness();
    let text = "";
    for (const ch of "retry failed uploads") {
      text += ch;
      live.update(text);
      mock.timers.tick(60);
    }
    assert.equal(sent.length, 0);
    mock.timers.tick(200);
    assert.deepEqual(sent.map((s) => s.query), ["retry failed uploads"]);
  } finally {
    mock.timers.reset();
  }
});

test("a new word cancels the request in flight; only the last answer is shown", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const { live, sent, shown, errors } = harness();
    for (const words of ["retry", "retry failed", "retry failed uploads"]) {
      live.update(words);
      mock.timers.tick(250); // longer than the debounce: each word is sent
    }
    assert.deepEqual(sent.map((s) => [s.query, s.cancelled]),
      [["retry", true], ["retry failed", true], ["retry failed uploads", false]]);
    sent[0].resolve("stale"); // an answer that arrives after its cancel is dropped
    sent[2].resolve("files");
    await settle();
    assert.deepEqual(shown, ["retry failed uploads -> files"]);
    assert.deepEqual(errors, []); // cancelled requests never report
    assert.equal(live.current, true);
  } finally {
    mock.timers.reset();
  }
});

test("Enter before the debounce searches at once, and only once", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const { live, sent } = harness();
    live.update("where are cookies kept");
    live.flush("where are cookies kept");
    live.flush("where are cookies kept");
    mock.timers.tick(500);
    assert.deepEqual(sent.map((s) => s.query), ["where are cookies kept"]);
    assert.equal(live.current, false); // no answer yet: Enter must not open a stale item
  } finally {
    mock.timers.reset();
  }
});

test("clearing the text cancels, a failure is reported, dispose stops everything", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const { live, sent, errors, busy } = harness();
    live.update("cache");
    mock.timers.tick(200);
    live.update("  ");
    assert.equal(sent[0].cancelled, true);
    assert.equal(busy.at(-1), false);
    live.update("lru cache");
    mock.timers.tick(200);
    sent[1].reject(new Error("boom"));
    await settle();
    assert.deepEqual(errors, ["lru cache"]);
    live.update("lru cache eviction");
    live.dispose();
    mock.timers.tick(1000);
    assert.equal(sent.length, 2);
  } finally {
    mock.timers.reset();
  }
});
