package io.nereus.generation;

import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamId;
import io.nereus.object.ObjectName;
import java.util.Optional;

/**
 * The names of stream objects: {@code streams/<sid>/<viewCode>/<start>-<end>-<random>}. A name is never used twice
 * (its random part comes from {@link io.nereus.runtime.EngineRuntime#uniqueId}), and carries what the garbage
 * collector needs to find the records that may name the object without reading it: stream, view and end offset.
 */
final class StreamObjectNames {
    /** The prefix of every stream object's name. */
    static final String ROOT = "streams/";

    /** What a stream object's name says. */
    record Parsed(StreamId stream, ReadView view, OffsetRange range) {
    }

    private StreamObjectNames() {
    }

    /**
     * The name of a new object of {@code stream} holding {@code range} in {@code view}, never used before given a
     * {@code unique} part never used before.
     */
    static ObjectName newName(StreamId stream, ReadView view, OffsetRange range, String unique) {
        return ObjectName.of(streamPrefix(stream) + view.code() + "/" + range.start() + "-" + range.end() + "-"
                + unique);
    }

    /** The prefix of every object name of {@code stream}: {@code streams/<sid>/}. */
    static String streamPrefix(StreamId stream) {
        return ROOT + stream.value() + "/";
    }

    /** The parts of a stream object's name; empty for a name of another form (not written by Nereus). */
    static Optional<Parsed> parse(ObjectName name) {
        String[] parts = name.value().split("/", -1);
        if (parts.length != 4 || !(parts[0] + "/").equals(ROOT)) {
            return Optional.empty();
        }
        String[] last = parts[3].split("-", -1);
        if (last.length != 3) {
            return Optional.empty();
        }
        try {
            StreamId stream = new StreamId(Long.parseLong(parts[1]));
            ReadView view = ReadView.fromCode(Long.parseLong(parts[2]));
            return Optional.of(new Parsed(stream, view, new OffsetRange(Long.parseLong(last[0]),
                    Long.parseLong(last[1]))));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
