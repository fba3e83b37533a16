/**
 * Bytes that `JSON.stringify(value)` occupies as UTF-8, the way Temporal stores a payload.
 * Computed by hand because the workflow sandbox must not depend on Node's `Buffer`.
 */
export function jsonUtf8Length(value: unknown): number {
  const text = JSON.stringify(value) ?? '';
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      // JSON.stringify escapes lone surrogates, so a high surrogate here starts a pair.
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
