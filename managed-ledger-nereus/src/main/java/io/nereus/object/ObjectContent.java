package io.nereus.object;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * The bytes of an object to be put: one or more byte arrays, concatenated in order, held in memory (a writer
 * assembles an object of bounded size, such as a header, entries and a footer, without copying them into one
 * array). The arrays are not copied: do not change them until the put has completed. A store may read the
 * content more than once (a retried request or part).
 */
public final class ObjectContent {
    private final List<byte[]> chunks;
    private final long length;

    private ObjectContent(List<byte[]> chunks) {
        long total = 0;
        for (byte[] c : chunks) {
            Objects.requireNonNull(c, "content chunk");
            total = Math.addExact(total, c.length);
        }
        this.chunks = chunks;
        this.length = total;
    }

    /** The concatenation of {@code chunks}; no chunk, or empty chunks, make an empty object. */
    public static ObjectContent of(byte[]... chunks) {
        return new ObjectContent(List.of(chunks));
    }

    public static ObjectContent of(List<byte[]> chunks) {
        return new ObjectContent(List.copyOf(chunks));
    }

    /** Size of the object in bytes. */
    public long length() {
        return length;
    }

    /** Read-only views of every byte, in order, each positioned at its start; new views on each call. */
    ByteBuffer[] buffers() {
        return buffers(0, length);
    }

    /** Read-only views of the bytes {@code [offset, offset + count)}, in order; new views on each call. */
    ByteBuffer[] buffers(long offset, long count) {
        if (offset < 0 || count < 0 || offset + count > length) {
            throw new IllegalArgumentException("[" + offset + ", +" + count + ") is not within " + length + " bytes");
        }
        List<ByteBuffer> out = new ArrayList<>();
        long chunkStart = 0;
        long end = offset + count;
        for (byte[] c : chunks) {
            long chunkEnd = chunkStart + c.length;
            long from = Math.max(offset, chunkStart);
            long to = Math.min(end, chunkEnd);
            if (from < to) {
                out.add(ByteBuffer.wrap(c, (int) (from - chunkStart), (int) (to - from)).slice().asReadOnlyBuffer());
            }
            chunkStart = chunkEnd;
        }
        return out.toArray(new ByteBuffer[0]);
    }

    /** The CRC32C of the whole content. */
    long crc32c() {
        CRC32C crc = new CRC32C();
        chunks.forEach(crc::update);
        return crc.getValue();
    }
}
