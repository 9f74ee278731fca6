package io.nereus.metadata;

/** A write conditional on the writer epoch found a newer writer in the head; nothing was written. */
public final class WriterFencedException extends RuntimeException {
    private final StreamId stream;
    private final long headEpoch;
    private final long requestEpoch;

    public WriterFencedException(StreamId stream, long headEpoch, long requestEpoch) {
        super("stream " + stream + " is fenced: head writer epoch " + headEpoch + ", request epoch " + requestEpoch);
        this.stream = stream;
        this.headEpoch = headEpoch;
        this.requestEpoch = requestEpoch;
    }

    public StreamId stream() {
        return stream;
    }

    public long headEpoch() {
        return headEpoch;
    }

    public long requestEpoch() {
        return requestEpoch;
    }
}
