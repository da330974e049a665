"""Expected results of graphs/collatz.cfx and graphs/counter.cfx, by plain Python loops."""


def collatz_steps(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def counter(n):
    return sum(i % 7 for i in range(n))


for start in ([1, 2, 3, 6, 7, 27], [97, 871, 9, 12, 19, 25]):
    print("# expect: steps = [%s]" % ", ".join(str(collatz_steps(n)) for n in start))
for n in (10, 0, -5, 100, 100000):
    print("# expect: s = %d" % counter(n))
