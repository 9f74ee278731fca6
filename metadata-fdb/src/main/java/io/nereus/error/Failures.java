package io.nereus.error;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** What failed, under the wrappers futures add. */
public final class Failures {
    private Failures() {
    }

    /**
     * Peels {@link CompletionException} and {@link ExecutionException} wrappers (those that carry a cause) off
     * {@code t}: the failure a future was completed with, or {@code t} itself when it is not such a wrapper.
     * Null stays null.
     */
    public static Throwable unwrap(Throwable t) {
        Throwable c = t;
        while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }
}
