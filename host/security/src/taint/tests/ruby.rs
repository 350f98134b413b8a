//! Ruby: Rails params.

use super::hits;

#[test]
fn rails_params_into_where_system_and_html_safe() {
    let bad = r#"
class UsersController < ApplicationController
  def show
    name = params[:name]
    User.where("name = '#{name}'")
    system("grep #{params[:q]} /var/log/app.log")
    @html = name.html_safe
    redirect_to params[:next]
  end
end
"#;
    assert_eq!(
        hits("ruby", bad),
        vec![
            ("RUBY-TAINT-CMDI".into(), 6),
            ("RUBY-TAINT-REDIRECT".into(), 8),
            ("RUBY-TAINT-SQLI".into(), 5),
            ("RUBY-TAINT-XSS".into(), 7),
        ]
    );
    let safe = r#"
class UsersController < ApplicationController
  def show
    User.where(name: params[:name])
    User.where("id = #{params[:id].to_i}")
    system("grep", params[:q], "/var/log/app.log")
    @html = "<b>hi</b>".html_safe
  end
end
"#;
    assert!(hits("ruby", safe).is_empty(), "{:?}", hits("ruby", safe));
}
