/**
 * The versioned binary encodings of every stored Nereus metadata value (one codec per value type, each
 * documenting its layout), the layout version of a metadata root ({@link io.nereus.metadata.codec.FormatVersion}),
 * and the primitive readers and writers they share. No FoundationDB or Pulsar imports.
 *
 * <h2>Stored-value vocabulary</h2>
 * Every value starts with one <b>format version byte</b>; a reader refuses versions it does not know. Fields
 * follow in the order documented on each codec, with no padding and nothing after the last field:
 * <ul>
 *   <li>{@code u8}: one unsigned byte (state codes, kinds, checksum types);</li>
 *   <li>{@code i32}, {@code i64}: two's-complement, big-endian, 4 and 8 bytes;</li>
 *   <li>{@code uN}: an unsigned big-endian integer of N bytes;</li>
 *   <li>{@code varint}: a non-negative long as unsigned LEB128 (7 bits per byte, least significant group
 *       first, high bit = more bytes follow), at most 10 bytes;</li>
 *   <li>{@code zigzag}: a signed long mapped by {@code (v << 1) ^ (v >> 63)} then written as a varint;</li>
 *   <li>{@code string}: a varint byte length followed by that many bytes of strict UTF-8.</li>
 * </ul>
 * State codes, view codes and checksum codes are the stable {@code code()} of their enums, never ordinals.
 * Every value fits FoundationDB's 100,000-byte value limit ({@link io.nereus.metadata.FdbLimits}); cursor
 * state, the only value that can grow without bound, is split into chunks by
 * {@link io.nereus.metadata.codec.CursorStateCodec}.
 */
package io.nereus.metadata.codec;
