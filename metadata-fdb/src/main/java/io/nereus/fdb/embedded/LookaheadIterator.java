package io.nereus.fdb.embedded;

import java.util.Iterator;
import java.util.NoSuchElementException;

/** An iterator that computes its next element ahead of time; {@link #advance()} returns null at the end. */
abstract class LookaheadIterator<T> implements Iterator<T> {
    private T next;
    private boolean started;

    /** The element after the last one returned, or {@code null} when there is none. */
    protected abstract T advance();

    private void start() {
        if (!started) {
            started = true;
            next = advance();
        }
    }

    @Override
    public boolean hasNext() {
        start();
        return next != null;
    }

    @Override
    public T next() {
        start();
        if (next == null) {
            throw new NoSuchElementException();
        }
        T r = next;
        next = advance();
        return r;
    }
}
