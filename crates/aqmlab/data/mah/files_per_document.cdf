# Mah 1997 HTTP/1.0 model: files per document (1 primary + embedded) (count).
# Source: B. A. Mah, "An Empirical Model of HTTP Network Traffic", IEEE INFOCOM 1997;
# Mah's CDF file HttpFilesPerDocument.cdf as transcribed in GloMoSim 2.02 application/http_distribution.c
# (repository deepak7514/Glomosim, generated 1999-10-27 from Mah's .cdf files).
# 27 points; every cumulative probability is k/1725 (a trace of 1725 observations),
# written here to 12 significant digits as in the source.
# Columns: value  P(X <= value)
1 0.486376811594
2 0.691594202899
3 0.781449275362
4 0.826086956522
5 0.875362318841
6 0.904347826087
7 0.92347826087
8 0.939710144928
9 0.950724637681
10 0.96115942029
11 0.966376811594
12 0.972173913043
13 0.974492753623
14 0.977971014493
15 0.980289855072
16 0.987246376812
17 0.987826086957
18 0.989565217391
19 0.993043478261
20 0.995942028986
21 0.99652173913
32 0.997101449275
33 0.99768115942
35 0.998260869565
37 0.99884057971
63 0.999420289855
65 1
