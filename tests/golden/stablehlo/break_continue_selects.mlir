module @sum_until_negative attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf64>) -> (tensor<f64>) {
    %0 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<i64>} : () -> tensor<i64> loc("break_continue.py":8:5)
    %1 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<f64>} : () -> tensor<f64> loc("break_continue.py":8:5)
    %2 = "stablehlo.constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1> loc("break_continue.py":8:5)
    %3 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<f64>} : () -> tensor<f64> loc("break_continue.py":8:5)
    %41:5 = "stablehlo.while"(%0, %1, %2, %3, %arg0) ({
      ^bb0(%b4: tensor<i64>, %b5: tensor<f64>, %b6: tensor<i1>, %b7: tensor<f64>, %b8: tensor<3xf64>):
        %9 = "stablehlo.constant"() {value = dense<"0x0300000000000000"> : tensor<i64>} : () -> tensor<i64> loc("break_continue.py":8:5)
        %10 = "stablehlo.compare"(%b4, %9) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>} : (tensor<i64>, tensor<i64>) -> tensor<i1> loc("break_continue.py":8:5)
        %11 = "stablehlo.not"(%b6) : (tensor<i1>) -> tensor<i1> loc("break_continue.py":8:5)
        %12 = "stablehlo.select"(%10, %11, %10) : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1> loc("break_continue.py":8:5)
        "stablehlo.return"(%12) : (tensor<i1>) -> () loc("break_continue.py":8:5)
      }, {
      ^bb0(%b13: tensor<i64>, %b14: tensor<f64>, %b15: tensor<i1>, %b16: tensor<f64>, %b17: tensor<3xf64>):
        %18 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<i64>} : () -> tensor<i64> loc("break_continue.py":8:5)
        %19 = "stablehlo.dynamic_slice"(%b17, %b13) {slice_sizes = array<i64: 1>} : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64> loc("break_continue.py":8:5)
        %20 = "stablehlo.reshape"(%19) : (tensor<1xf64>) -> tensor<f64> loc("break_continue.py":8:5)
        %21 = "stablehlo.constant"() {value = dense<"0x0100000000000000"> : tensor<i64>} : () -> tensor<i64> loc("break_continue.py":8:5)
        %22 = "stablehlo.add"(%b13, %21) : (tensor<i64>, tensor<i64>) -> tensor<i64> loc("break_continue.py":8:5)
        %23 = "stablehlo.compare"(%20, %20) {comparison_direction = #stablehlo<comparison_direction NE>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<f64>, tensor<f64>) -> tensor<i1> loc("break_continue.py":9:12)
        %24 = "stablehlo.convert"(%23) : (tensor<i1>) -> tensor<i32> loc("break_continue.py":9:9)
        %25 = "stablehlo.constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1> loc("break_continue.py":9:9)
        %26 = "stablehlo.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1> loc("break_continue.py":9:9)
        %27 = "stablehlo.select"(%23, %26, %25) : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1> loc("break_continue.py":9:9)
        %28 = "stablehlo.not"(%27) : (tensor<i1>) -> tensor<i1> loc("break_continue.py":11:9)
        %29 = "stablehlo.convert"(%28) : (tensor<i1>) -> tensor<i32> loc("break_continue.py":11:9)
        %30 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<f64>} : () -> tensor<f64> loc("break_continue.py":11:12)
        %31 = "stablehlo.compare"(%20, %30) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<f64>, tensor<f64>) -> tensor<i1> loc("break_continue.py":11:12)
        %32 = "stablehlo.convert"(%31) : (tensor<i1>) -> tensor<i32> loc("break_continue.py":11:9)
        %33 = "stablehlo.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1> loc("break_continue.py":11:9)
        %34 = "stablehlo.select"(%31, %33, %b15) : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1> loc("break_continue.py":11:9)
        %35 = "stablehlo.not"(%34) : (tensor<i1>) -> tensor<i1> loc("break_continue.py":13:9)
        %36 = "stablehlo.convert"(%35) : (tensor<i1>) -> tensor<i32> loc("break_continue.py":13:9)
        %37 = "stablehlo.add"(%b16, %20) : (tensor<f64>, tensor<f64>) -> tensor<f64> loc("break_continue.py":13:17)
        %38 = "stablehlo.select"(%35, %37, %b16) : (tensor<i1>, tensor<f64>, tensor<f64>) -> tensor<f64> loc("break_continue.py":13:9)
        %39 = "stablehlo.select"(%28, %34, %b15) : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1> loc("break_continue.py":11:9)
        %40 = "stablehlo.select"(%28, %38, %b16) : (tensor<i1>, tensor<f64>, tensor<f64>) -> tensor<f64> loc("break_continue.py":11:9)
        "stablehlo.return"(%22, %20, %39, %40, %b17) : (tensor<i64>, tensor<f64>, tensor<i1>, tensor<f64>, tensor<3xf64>) -> () loc("break_continue.py":8:5)
      }) : (tensor<i64>, tensor<f64>, tensor<i1>, tensor<f64>, tensor<3xf64>) -> (tensor<i64>, tensor<f64>, tensor<i1>, tensor<f64>, tensor<3xf64>) loc("break_continue.py":8:5)
    "func.return"(%41#3) : (tensor<f64>) -> ()
  }
}
