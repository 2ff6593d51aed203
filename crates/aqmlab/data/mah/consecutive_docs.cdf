# Mah 1997 HTTP/1.0 model: consecutive documents fetched from one server (count).
# Source: B. A. Mah, "An Empirical Model of HTTP Network Traffic", IEEE INFOCOM 1997;
# Mah's CDF file HttpConsecutiveDocs.cdf as transcribed in GloMoSim 2.02 application/http_distribution.c
# (repository deepak7514/Glomosim, generated 1999-10-27 from Mah's .cdf files).
# 21 points; every cumulative probability is k/253 (a trace of 253 observations),
# written here to 12 significant digits as in the source.
# Columns: value  P(X <= value)
1 0.355731225296
2 0.549407114625
3 0.664031620553
4 0.747035573123
5 0.790513833992
6 0.814229249012
7 0.841897233202
8 0.881422924901
9 0.893280632411
10 0.901185770751
11 0.905138339921
12 0.909090909091
13 0.928853754941
14 0.944664031621
15 0.95652173913
16 0.96442687747
17 0.96837944664
18 0.97628458498
19 0.99209486166
21 0.99604743083
37 1
