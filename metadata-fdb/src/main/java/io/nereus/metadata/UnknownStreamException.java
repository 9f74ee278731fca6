package io.nereus.metadata;

/** An operation named a stream that has no head (never created, or removed). Not retriable. */
public final class UnknownStreamException extends RuntimeException {
    private final StreamId stream;

    public UnknownStreamException(StreamId stream) {
        super("unknown stream " + stream);
        this.stream = stream;
    }

    public StreamId stream() {
        return stream;
    }
}
