import fc from 'fast-check';

/**
 * Strings for property tests of text that is stored: any UTF-16 code unit (lone surrogates included), whole code
 * points, and, more often, the characters PostgreSQL cannot hold or the storage encoding is about (NUL, surrogates,
 * U+FFFF and what its escapes look like, JSON escapes written out as text).
 */
const unit = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('\0', '\ud800', '\udbff', '\udc00', '\udfff', '\ud83d\ude00', '\uffff', '\ufffd', '\\', '\\u0000', '\\ud800', '\uffff0000', '\uffffd800', '\uffffffff', '"', '\n') },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);

export const anyText = (maxLength = 40) => fc.string({ unit, maxLength });
