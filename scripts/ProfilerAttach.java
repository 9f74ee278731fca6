import com.sun.tools.attach.VirtualMachine;

/**
 * Sends one command to async-profiler in a running JVM: loads the profiler's native library into the process through
 * the JDK's attach mechanism (as the profiler's own launcher does) with the command as the agent's options, e.g.
 * {@code start,event=cpu,interval=1ms,threads} or {@code stop,file=cpu.collapsed,collapsed}. Used by
 * scripts/bench-vs-stock with BENCH_PROFILE=1, on demand; not part of the test command.
 *
 * <pre>java scripts/ProfilerAttach.java PID LIBRARY COMMAND</pre>
 */
public class ProfilerAttach {
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: java ProfilerAttach.java PID LIBRARY COMMAND");
            System.exit(2);
        }
        VirtualMachine vm = VirtualMachine.attach(args[0]);
        try {
            vm.loadAgentPath(args[1], args[2]);
        } finally {
            vm.detach();
        }
    }
}
