package io.nereus.wal;

import com.scurrilous.circe.checksum.Crc32cIntChecksum;
import io.netty.buffer.ByteBuf;

/**
 * CRC32C over buffers without moving their indices, and the CRC32C of a concatenation from the CRCs of its parts.
 *
 * <p>{@link #update} goes on from a CRC32C value, with BookKeeper's checksum library (the broker's, which computes
 * Pulsar's message checksums): over a direct buffer it reads the bytes at the buffer's address, with the native
 * CRC32C instruction where its library loads. {@code java.util.zip.CRC32C} takes a direct buffer only as a
 * {@code ByteBuffer}, a view allocated per call (with its checksum object, about 150 bytes): at a thousand topics
 * one for every section written and every section a materializer's pass checks, a few hundred megabytes a minute.
 *
 * <p>{@link #combine} is what lets a WAL batch read each payload byte once: the batch trailer is the CRC32C of
 * every byte before it, and the payload area is the sections back to back, whose CRCs are already computed for the
 * directory; so the trailer is the header's CRC combined with each section's, with no second pass over the
 * payloads. The value is the CRC32C of those bytes, the same one a reader computes, so detection is unchanged.
 *
 * <p>The combination is the standard one for CRCs with pre- and post-conditioning (as zlib's
 * {@code crc32_combine}): {@code crc(A ‖ B) = crc(A) · x^(8·|B|) mod P  xor  crc(B)}, in the reflected bit order
 * of CRC32C's polynomial 0x1EDC6F41 (reflected 0x82F63B78); {@code x^(8n)} is built from the squares
 * {@code x^(2^k)}, so a combination costs a few dozen carry-less multiplications whatever {@code |B|} is.
 */
final class Crc32c {
    private static final int POLY = 0x82F63B78;
    /** {@code X2N[k] = x^(2^k) mod P}, reflected. */
    private static final int[] X2N = new int[32];

    static {
        int p = 1 << 30; // x^1
        X2N[0] = p;
        for (int k = 1; k < 32; k++) {
            p = multiply(p, p);
            X2N[k] = p;
        }
    }

    private Crc32c() {
    }

    /**
     * The CRC32C of the bytes {@code crc} is the CRC32C of followed by {@code buf}'s readable bytes (from 0: of those
     * bytes alone); {@code buf}'s indices do not move.
     */
    static int update(int crc, ByteBuf buf) {
        int length = buf.readableBytes();
        if (length == 0) {
            return crc;
        }
        return Crc32cIntChecksum.resumeChecksum(crc, buf, buf.readerIndex(), length);
    }

    /** The CRC32C of {@code A ‖ B} given {@code crcA = crc32c(A)}, {@code crcB = crc32c(B)} and {@code |B|}. */
    static int combine(int crcA, int crcB, long lengthB) {
        if (lengthB < 0) {
            throw new IllegalArgumentException("length must be >= 0: " + lengthB);
        }
        return multiply(xPow8n(lengthB), crcA) ^ crcB;
    }

    /** {@code x^(8n) mod P}, reflected. */
    private static int xPow8n(long n) {
        int p = 1 << 31; // x^0
        int k = 3; // 8n = n * 2^3
        while (n != 0) {
            if ((n & 1) != 0) {
                p = multiply(X2N[k & 31], p);
            }
            n >>>= 1;
            k++;
        }
        return p;
    }

    /** {@code a · b mod P}, reflected (bit 31 is x^0). */
    private static int multiply(int a, int b) {
        if (a == 0) {
            return 0;
        }
        int m = 1 << 31;
        int p = 0;
        while (true) {
            if ((a & m) != 0) {
                p ^= b;
                if ((a & (m - 1)) == 0) {
                    break;
                }
            }
            m >>>= 1;
            b = (b & 1) != 0 ? (b >>> 1) ^ POLY : b >>> 1;
        }
        return p;
    }
}
