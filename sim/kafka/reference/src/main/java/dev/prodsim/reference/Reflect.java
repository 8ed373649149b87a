package dev.prodsim.reference;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/** The few Kafka calls whose shape changed inside one API generation. */
final class Reflect {
    private Reflect() {}

    /** target.method(args) (static when target is null), with Kafka's own exception rethrown as is. */
    static Object invoke(Method method, Object target, Object... args) {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(cause);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The public method of that name and arity, or null. */
    static Method method(Class<?> type, String name, int arity) {
        for (Method m : type.getMethods()) {
            if (m.getName().equals(name) && m.getParameterCount() == arity) {
                return m;
            }
        }
        return null;
    }

    /** The first of these classes that exists. */
    static Class<?> firstClass(String... names) {
        for (String name : names) {
            try {
                return Class.forName(name);
            } catch (ClassNotFoundException e) {
                // try the next
            }
        }
        throw new IllegalStateException("none of " + String.join(", ", names) + " in this Kafka");
    }
}
