import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Checks that the jars Nereus adds to a Pulsar distribution's lib/ shadow no class of it: no class file (outside
 * META-INF/, module-info aside) of an added jar is also in a jar the distribution has, or in another added jar.
 * Run as a single-file program by scripts/nereus-standalone:
 *
 *   java scripts/LibOverlap.java <lib dir> <file naming the added jars, one a line>
 *
 * Prints each clash and exits 1 when there is one, else prints a summary and exits 0.
 */
public class LibOverlap {
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: java LibOverlap.java <lib dir> <added jars list>");
            System.exit(2);
        }
        Path lib = Path.of(args[0]);
        TreeSet<String> added = new TreeSet<>();
        for (String line : Files.readAllLines(Path.of(args[1]))) {
            if (!line.isBlank()) {
                added.add(line.strip());
            }
        }
        Map<String, String> owner = new HashMap<>(); // class entry -> the jar that has it
        int distJars = 0;
        try (DirectoryStream<Path> jars = Files.newDirectoryStream(lib, "*.jar")) {
            for (Path jar : jars) {
                String name = jar.getFileName().toString();
                if (!added.contains(name)) {
                    distJars++;
                    for (String c : classes(jar)) {
                        owner.putIfAbsent(c, name);
                    }
                }
            }
        }
        List<String> clashes = new ArrayList<>();
        int addedClasses = 0;
        for (String name : added) {
            int shown = 0;
            for (String c : classes(lib.resolve(name))) {
                addedClasses++;
                String other = owner.putIfAbsent(c, name);
                if (other != null) {
                    if (shown++ < 5) {
                        clashes.add(name + ": " + c + " is also in " + other);
                    } else if (shown == 6) {
                        clashes.add(name + ": more clashes left out");
                    }
                }
            }
        }
        if (!clashes.isEmpty()) {
            clashes.forEach(System.err::println);
            System.exit(1);
        }
        System.out.println(added.size() + " added jars (" + addedClasses + " classes) shadow none of the "
                + distJars + " jars of " + lib);
    }

    private static List<String> classes(Path jar) throws IOException {
        List<String> out = new ArrayList<>();
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            for (ZipEntry e : java.util.Collections.list(zip.entries())) {
                String n = e.getName();
                if (n.endsWith(".class") && !n.startsWith("META-INF/") && !n.endsWith("module-info.class")) {
                    out.add(n);
                }
            }
        }
        return out;
    }
}
