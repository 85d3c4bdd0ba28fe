module @sum_until_negative attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf64>) -> (tensor<f64>) {
    %0 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<i64>} : () -> tensor<i64> loc("break_continue.py":8:5)
    %1 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<f64>} : () -> tensor<f64> loc("break_continue.py":8:5)
    %2 = "stablehlo.constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1> loc("break_continue.py":8:5)
    %3 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<f64>} : () -> tensor<f64> loc("break_continue.py":8:5)
    %47:5 = "stablehlo.while"(%0, %1, %2, %3, %arg0) ({
      ^bb0(%b4: tensor<i64>, %b5: tensor<f64>, %b6: tensor<i1>, %b7: tensor<f64>, %b8: tensor<3xf64>):
        %9 = "stablehlo.constant"() {value = dense<"0x0300000000000000"> : tensor<i64>} : () -> tensor<i64> loc("break_continue.py":8:5)
        %10 = "stablehlo.compare"(%b4, %9) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>} : (tensor<i64>, tensor<i64>) -> tensor<i1> loc("break_continue.py":8:5)
        %11 = "stablehlo.not"(%b6) : (tensor<i1>) -> tensor<i1> loc("break_continue.py":8:5)
        %12 = "stablehlo.select"(%10, %11, %10) : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1> loc("break_continue.py":8:5)
        "stablehlo.return"(%12) : (tensor<i1>) -> () loc("break_continue.py":8:5)
      }, {
      ^bb0(%b13: tensor<i64>, %b14: tensor<f64>, %b15: tensor<i1>, %b16: tensor<f64>, %b17: tensor<3xf64>):
        %18 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<i64>} : () -> tensor<i64> loc("break_continue.py":8:5)
        %19 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<i64>} : () -> tensor<i64> loc("break_continue.py":8:5)
        %20 = "stablehlo.broadcast_in_dim"(%19) {broadcast_dimensions = array<i64>} : (tensor<i64>) -> tensor<i64> loc("break_continue.py":8:5)
        %21 = "stablehlo.constant"() {value = dense<"0x0300000000000000"> : tensor<i64>} : () -> tensor<i64> loc("break_continue.py":8:5)
        %22 = "stablehlo.broadcast_in_dim"(%21) {broadcast_dimensions = array<i64>} : (tensor<i64>) -> tensor<i64> loc("break_continue.py":8:5)
        %23 = "stablehlo.add"(%b13, %22) : (tensor<i64>, tensor<i64>) -> tensor<i64> loc("break_continue.py":8:5)
        %24 = "stablehlo.compare"(%b13, %20) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>} : (tensor<i64>, tensor<i64>) -> tensor<i1> loc("break_continue.py":8:5)
        %25 = "stablehlo.select"(%24, %23, %b13) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64> loc("break_continue.py":8:5)
        %26 = "stablehlo.dynamic_slice"(%b17, %25) {slice_sizes = array<i64: 1>} : (tensor<3xf64>, tensor<i64>) -> tensor<1xf64> loc("break_continue.py":8:5)
        %27 = "stablehlo.reshape"(%26) : (tensor<1xf64>) -> tensor<f64> loc("break_continue.py":8:5)
        %28 = "stablehlo.constant"() {value = dense<"0x0100000000000000"> : tensor<i64>} : () -> tensor<i64> loc("break_continue.py":8:5)
        %29 = "stablehlo.add"(%b13, %28) : (tensor<i64>, tensor<i64>) -> tensor<i64> loc("break_continue.py":8:5)
        %30 = "stablehlo.compare"(%27, %27) {comparison_direction = #stablehlo<comparison_direction NE>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<f64>, tensor<f64>) -> tensor<i1> loc("break_continue.py":9:12)
        %31 = "stablehlo.convert"(%30) : (tensor<i1>) -> tensor<i32> loc("break_continue.py":9:9)
        %34 = "stablehlo.case"(%31) ({
            %32 = "stablehlo.constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1> loc("break_continue.py":9:9)
            "stablehlo.return"(%32) : (tensor<i1>) -> () loc("break_continue.py":9:9)
          }, {
            %33 = "stablehlo.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1> loc("break_continue.py":9:9)
            "stablehlo.return"(%33) : (tensor<i1>) -> () loc("break_continue.py":9:9)
          }) : (tensor<i32>) -> tensor<i1> loc("break_continue.py":9:9)
        %35 = "stablehlo.not"(%34) : (tensor<i1>) -> tensor<i1> loc("break_continue.py":11:9)
        %36 = "stablehlo.convert"(%35) : (tensor<i1>) -> tensor<i32> loc("break_continue.py":11:9)
        %46:2 = "stablehlo.case"(%36) ({
            "stablehlo.return"(%b15, %b16) : (tensor<i1>, tensor<f64>) -> () loc("break_continue.py":11:9)
          }, {
            %37 = "stablehlo.constant"() {value = dense<"0x0000000000000000"> : tensor<f64>} : () -> tensor<f64> loc("break_continue.py":11:12)
            %38 = "stablehlo.compare"(%27, %37) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<f64>, tensor<f64>) -> tensor<i1> loc("break_continue.py":11:12)
            %39 = "stablehlo.convert"(%38) : (tensor<i1>) -> tensor<i32> loc("break_continue.py":11:9)
            %41 = "stablehlo.case"(%39) ({
                "stablehlo.return"(%b15) : (tensor<i1>) -> () loc("break_continue.py":11:9)
              }, {
                %40 = "stablehlo.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1> loc("break_continue.py":11:9)
                "stablehlo.return"(%40) : (tensor<i1>) -> () loc("break_continue.py":11:9)
              }) : (tensor<i32>) -> tensor<i1> loc("break_continue.py":11:9)
            %42 = "stablehlo.not"(%41) : (tensor<i1>) -> tensor<i1> loc("break_continue.py":13:9)
            %43 = "stablehlo.convert"(%42) : (tensor<i1>) -> tensor<i32> loc("break_continue.py":13:9)
            %45 = "stablehlo.case"(%43) ({
                "stablehlo.return"(%b16) : (tensor<f64>) -> () loc("break_continue.py":13:9)
              }, {
                %44 = "stablehlo.add"(%b16, %27) : (tensor<f64>, tensor<f64>) -> tensor<f64> loc("break_continue.py":13:17)
                "stablehlo.return"(%44) : (tensor<f64>) -> () loc("break_continue.py":13:9)
              }) : (tensor<i32>) -> tensor<f64> loc("break_continue.py":13:9)
            "stablehlo.return"(%41, %45) : (tensor<i1>, tensor<f64>) -> () loc("break_continue.py":11:9)
          }) : (tensor<i32>) -> (tensor<i1>, tensor<f64>) loc("break_continue.py":11:9)
        "stablehlo.return"(%29, %27, %46#0, %46#1, %b17) : (tensor<i64>, tensor<f64>, tensor<i1>, tensor<f64>, tensor<3xf64>) -> () loc("break_continue.py":8:5)
      }) : (tensor<i64>, tensor<f64>, tensor<i1>, tensor<f64>, tensor<3xf64>) -> (tensor<i64>, tensor<f64>, tensor<i1>, tensor<f64>, tensor<3xf64>) loc("break_continue.py":8:5)
    "func.return"(%47#3) : (tensor<f64>) -> ()
  }
}
