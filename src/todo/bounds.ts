/**
 * Size limits on one write. The seed has none; ours keep every accepted write far below
 * Temporal's 2 MB payload limit, whatever characters the content holds.
 */
export interface TodoBounds {
  /** Most todos in one list. */
  maxItems: number;
  /**
   * Most characters in one `content`, counted as Unicode code points (an emoji is one), the
   * way JSON Schema's `maxLength` counts them, so the schema a model is shown says the same.
   */
  maxContentLength: number;
  /** Most bytes of the list serialised as UTF-8 JSON, the form Temporal stores. */
  maxListBytes: number;
}

/**
 * Generous defaults: 500 todos of up to 1,000 characters, at most 512 KiB of JSON in all —
 * a quarter of Temporal's per-payload limit.
 */
export const DEFAULT_TODO_BOUNDS: Readonly<TodoBounds> = Object.freeze({
  maxItems: 500,
  maxContentLength: 1000,
  maxListBytes: 512 * 1024,
});
