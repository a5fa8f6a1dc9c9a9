// Search as you type, without `vscode`: debounces the text, keeps at most one request in flight and
// cancels it as soon as the text changes. Unit-tested with node:test's mock timers.

/** One request in flight: its answer, and how to cancel it (for LSP, a CancellationTokenSource). */
export interface Ticket<R> {
  answer: Promise<R>;
  cancel(): void;
}

export interface LiveSearchOptions<R> {
  /** Starts a request for `query` (already trimmed, never empty). */
  start: (query: string) => Ticket<R>;
  /** The answer for the current text; older answers are dropped. */
  onResult: (query: string, result: R) => void;
  /** A request for the current text failed (a cancelled one never reports). */
  onError: (query: string, error: unknown) => void;
  /** Whether a request is pending or in flight for the current text. */
  onBusy?: (busy: boolean) => void;
  delayMs?: number;
}

export const DEFAULT_DELAY_MS = 200;

export class LiveSearch<R> {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: Ticket<R> | undefined;
  private text = "";
  /** The query of the request in flight or last answered, "" when none. */
  private requested = "";
  /** The query whose answer is shown. */
  answered = "";
  private disposed = false;

  constructor(private readonly options: LiveSearchOptions<R>) {}

  /** The text changed: cancel what is in flight, and search once it has not changed for a while. */
  update(value: string): void {
    const query = value.trim();
    if (this.disposed || query === this.text) {
      return;
    }
    this.text = query;
    this.clearTimer();
    this.cancelInFlight();
    if (query === "") {
      this.setBusy(false);
      return;
    }
    this.setBusy(true);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run(query);
    }, this.options.delayMs ?? DEFAULT_DELAY_MS);
  }

  /** Search the current text now (Enter before the debounce ran out); nothing when it is already asked. */
  flush(value?: string): void {
    if (value !== undefined) {
      this.update(value);
    }
    if (this.disposed || this.text === "" || this.requested === this.text) {
      return;
    }
    this.clearTimer();
    this.run(this.text);
  }

  /** Whether the shown answer is for the current text. */
  get current(): boolean {
    return this.text !== "" && this.answered === this.text;
  }

  dispose(): void {
    this.disposed = true;
    this.clearTimer();
    this.cancelInFlight();
  }

  private run(query: string): void {
    this.cancelInFlight();
    this.requested = query;
    const ticket = this.options.start(query);
    this.inFlight = ticket;
    ticket.answer.then(
      (result) => {
        if (this.inFlight !== ticket) {
          return;
        }
        this.inFlight = undefined;
        this.answered = query;
        this.setBusy(false);
        this.options.onResult(query, result);
      },
      (error: unknown) => {
        if (this.inFlight !== ticket) {
          return;
        }
        this.inFlight = undefined;
        this.requested = "";
        this.setBusy(false);
        this.options.onError(query, error);
      },
    );
  }

  private cancelInFlight(): void {
    if (this.inFlight) {
      const ticket = this.inFlight;
      this.inFlight = undefined;
      this.requested = "";
      ticket.cancel();
    }
  }

  private clearTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private setBusy(busy: boolean): void {
    this.options.onBusy?.(busy);
  }
}
