package io.nereus.error;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/** Assertions on {@link NereusException}s shared by the metadata tests. */
public final class ErrorAssertions {
    private ErrorAssertions() {
    }

    /** Runs {@code call}, which must throw a {@link NereusException} of {@code code}; returns it for more checks. */
    public static NereusException thrown(ErrorCode code, ThrowingCallable call) {
        Throwable t = catchThrowable(call);
        assertThat(t).as("thrown").isInstanceOf(NereusException.class);
        NereusException n = (NereusException) t;
        assertThat(n.code()).as("code of %s", n).isEqualTo(code);
        return n;
    }
}
